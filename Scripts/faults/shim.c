// An LD_PRELOAD shim for Scripts/tag-faults.py (issue 28): it fails, or kills the process
// at, the Nth call of one kind that writes or syncs a file, so that a sweep can try every
// call a normal edit makes. Test tooling only: never built into the toolkit.
//
//   FAULT_CALL   write | pwrite | fsync | rename | renameat2 | copy_file_range | ftruncate
//   FAULT_AT     N (1-based) among the calls of that kind; 0 or unset: count only
//   FAULT_ERRNO  the errno of the failure (a number; default EIO)
//   FAULT_KILL   "before": SIGKILL instead of the call; "after": SIGKILL right after it
//   FAULT_COUNTS a file to write "KIND COUNT" lines to at exit
//   FAULT_PAUSE  a folder: instead of failing the call, create FOLDER/paused, wait until
//                FOLDER/resume exists (at most 60 s), then make the call (to interleave
//                another program's step at exactly that point)
//
// write and pwrite count only writes to regular files (what a file holds; a failed write to
// stderr damages nothing). renameat2 and copy_file_range are reached through syscall(2),
// which the toolkit's C shim uses for them.
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/types.h>
#include <unistd.h>

enum { K_WRITE, K_PWRITE, K_FSYNC, K_RENAME, K_RENAMEAT2, K_COPY, K_FTRUNCATE, K_COUNT };
static const char *names[K_COUNT] = {"write", "pwrite", "fsync", "rename", "renameat2", "copy_file_range",
                                     "ftruncate"};
static long counts[K_COUNT];
static int target = -1;
static long target_at;
static int target_errno = EIO;
static int kill_when;  // 0 none, 1 before, 2 after
static const char *pause_folder;

__attribute__((constructor)) static void setup(void) {
    const char *call = getenv("FAULT_CALL");
    for (int k = 0; call && k < K_COUNT; k++)
        if (strcmp(call, names[k]) == 0) target = k;
    const char *at = getenv("FAULT_AT");
    target_at = at ? atol(at) : 0;
    const char *code = getenv("FAULT_ERRNO");
    if (code) target_errno = atoi(code);
    const char *when = getenv("FAULT_KILL");
    if (when) kill_when = strcmp(when, "before") == 0 ? 1 : strcmp(when, "after") == 0 ? 2 : 0;
    pause_folder = getenv("FAULT_PAUSE");
}

static void pause_here(void) {
    char path[4096];
    snprintf(path, sizeof path, "%s/paused", pause_folder);
    int fd = open(path, O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
    if (fd >= 0) close(fd);
    snprintf(path, sizeof path, "%s/resume", pause_folder);
    for (int waited = 0; waited < 60000 && access(path, F_OK) != 0; waited += 2) usleep(2000);
}

__attribute__((destructor)) static void report(void) {
    const char *path = getenv("FAULT_COUNTS");
    if (!path) return;
    FILE *out = fopen(path, "w");
    if (!out) return;
    for (int k = 0; k < K_COUNT; k++) fprintf(out, "%s %ld\n", names[k], counts[k]);
    fclose(out);
}

// 1: fail this call (errno set); 2: make it, then kill; 0: make it.
static int decide(int kind) {
    long n = __atomic_add_fetch(&counts[kind], 1, __ATOMIC_SEQ_CST);
    if (kind != target || target_at == 0 || n != target_at) return 0;
    if (pause_folder) {
        pause_here();
        return 0;
    }
    if (kill_when == 1) raise(SIGKILL);
    if (kill_when == 2) return 2;
    errno = target_errno;
    return 1;
}

static int regular(int fd) {
    struct stat s;
    return fstat(fd, &s) == 0 && S_ISREG(s.st_mode);
}

#define REAL(name, ret, args) static ret(*real) args = NULL; if (!real) real = (ret(*) args)dlsym(RTLD_NEXT, name)
#define AFTER(action) do { if (action == 2) raise(SIGKILL); } while (0)

ssize_t write(int fd, const void *buffer, size_t count) {
    REAL("write", ssize_t, (int, const void *, size_t));
    int action = regular(fd) ? decide(K_WRITE) : 0;
    if (action == 1) return -1;
    ssize_t result = real(fd, buffer, count);
    AFTER(action);
    return result;
}

static ssize_t positioned(const char *name, int fd, const void *buffer, size_t count, off_t offset) {
    static ssize_t (*reals[2])(int, const void *, size_t, off_t);
    int slot = strcmp(name, "pwrite") == 0 ? 0 : 1;
    if (!reals[slot]) reals[slot] = (ssize_t (*)(int, const void *, size_t, off_t))dlsym(RTLD_NEXT, name);
    int action = regular(fd) ? decide(K_PWRITE) : 0;
    if (action == 1) return -1;
    ssize_t result = reals[slot](fd, buffer, count, offset);
    AFTER(action);
    return result;
}

ssize_t pwrite(int fd, const void *buffer, size_t count, off_t offset) {
    return positioned("pwrite", fd, buffer, count, offset);
}

ssize_t pwrite64(int fd, const void *buffer, size_t count, off_t offset) {
    return positioned("pwrite64", fd, buffer, count, offset);
}

int fsync(int fd) {
    REAL("fsync", int, (int));
    int action = decide(K_FSYNC);
    if (action == 1) return -1;
    int result = real(fd);
    AFTER(action);
    return result;
}

int fdatasync(int fd) {
    REAL("fdatasync", int, (int));
    int action = decide(K_FSYNC);
    if (action == 1) return -1;
    int result = real(fd);
    AFTER(action);
    return result;
}

int rename(const char *from, const char *to) {
    REAL("rename", int, (const char *, const char *));
    int action = decide(K_RENAME);
    if (action == 1) return -1;
    int result = real(from, to);
    AFTER(action);
    return result;
}

static int truncated(const char *name, int fd, off_t length) {
    static int (*reals[2])(int, off_t);
    int slot = strcmp(name, "ftruncate") == 0 ? 0 : 1;
    if (!reals[slot]) reals[slot] = (int (*)(int, off_t))dlsym(RTLD_NEXT, name);
    int action = decide(K_FTRUNCATE);
    if (action == 1) return -1;
    int result = reals[slot](fd, length);
    AFTER(action);
    return result;
}

int ftruncate(int fd, off_t length) { return truncated("ftruncate", fd, length); }
int ftruncate64(int fd, off_t length) { return truncated("ftruncate64", fd, length); }

long syscall(long number, ...) {
    REAL("syscall", long, (long, ...));
    va_list list;
    va_start(list, number);
    long a[6];
    for (int i = 0; i < 6; i++) a[i] = va_arg(list, long);
    va_end(list);
    int action = 0;
#ifdef SYS_renameat2
    if (number == SYS_renameat2) action = decide(K_RENAMEAT2);
#endif
#ifdef SYS_copy_file_range
    if (number == SYS_copy_file_range) action = decide(K_COPY);
#endif
    if (action == 1) return -1;
    long result = real(number, a[0], a[1], a[2], a[3], a[4], a[5]);
    AFTER(action);
    return result;
}
