// Darwin review (issue 21). CI builds this file on Linux only; each __APPLE__ branch and
// each call the Darwin build compiles was checked against Apple's manual pages:
//   - renamex_np(from, to, RENAME_EXCL): rename(2); declared in <stdio.h>, macOS 10.12 /
//     iOS 10 and later; EEXIST when `to` exists, ENOTSUP (or EOPNOTSUPP) where the file
//     system cannot, which OutputFile answers with link + unlink.
//   - renamex_np(a, b, RENAME_SWAP): rename(2), same availability; ENOTSUP where the file
//     system cannot swap, which a tag rewrite answers with its check and rename(2).
//   - fcntl(fd, F_RDADVISE, &(struct radvisory){off_t ra_offset; int ra_count}): fcntl(2);
//     ra_count is an int, hence the pieces of at most INT_MAX.
//   - fcntl(fd, F_FULLFSYNC): fcntl(2) and fsync(2); fsync alone does not flush the drive's
//     cache on Darwin. Where F_FULLFSYNC fails (file systems without it), fsync.
//   - copy_file_range, sync_file_range and syncfs: Linux only; ENOSYS and nothing on Darwin.
//   - ioctl(fd, TIOCGWINSZ, &winsize): ioctl(2), tty(4); <sys/ioctl.h>.
//   - flistxattr(fd, buf, size, 0), fgetxattr(fd, name, value, size, 0, 0),
//     fsetxattr(fd, name, value, size, 0, 0): listxattr(2), getxattr(2), setxattr(2);
//     <sys/xattr.h>, each with Darwin's extra position and options arguments.
//   - pthread_mutex_init/lock/unlock/destroy: pthread_mutex_init(3), pthread_mutex_lock(3);
//     the mutex lives on the heap (malloc(3)) and never moves. The same code on Linux and
//     Darwin: no os_unfair_lock branch, so what CI tests is what apps run.
//   - pthread_create/pthread_join: pthread_create(3), pthread_join(3); pthread_t stays here.
//   - __atomic_fetch_or/and, __atomic_load_n on uint64_t: clang builtins, lock-free on
//     arm64, arm64_32 and x86_64.
//   - csystem_remove_folder: rmdir(2) only on Darwin (getdents64 is Linux's; Darwin's
//     directory listing calls are not on sigaction(2)'s async-signal-safe list).

#define _GNU_SOURCE
#include "CSystem.h"
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/ioctl.h>
#include <unistd.h>
#include <string.h>
#if defined(__linux__)
#include <sys/syscall.h>
#endif
#if defined(__linux__) || defined(__APPLE__)
#include <sys/xattr.h>
#endif
#if defined(__APPLE__)
#include <limits.h>
#include <stdint.h>
#endif

#ifndef RENAME_NOREPLACE
#define RENAME_NOREPLACE (1 << 0)
#endif

int csystem_rename_noreplace(const char *from, const char *to) {
#if defined(__linux__) && defined(SYS_renameat2)
    return (int)syscall(SYS_renameat2, AT_FDCWD, from, AT_FDCWD, to, RENAME_NOREPLACE);
#elif defined(__APPLE__)
    return renamex_np(from, to, RENAME_EXCL);
#else
    (void)from;
    (void)to;
    errno = ENOSYS;
    return -1;
#endif
}

#ifndef RENAME_EXCHANGE
#define RENAME_EXCHANGE (1 << 1)
#endif

int csystem_rename_exchange(const char *a, const char *b) {
#if defined(__linux__) && defined(SYS_renameat2)
    return (int)syscall(SYS_renameat2, AT_FDCWD, a, AT_FDCWD, b, RENAME_EXCHANGE);
#elif defined(__APPLE__)
    return renamex_np(a, b, RENAME_SWAP);
#else
    (void)a;
    (void)b;
    errno = ENOSYS;
    return -1;
#endif
}

ssize_t csystem_copy_file_range(int in, off_t *in_offset, int out, size_t length) {
#if defined(__linux__) && defined(SYS_copy_file_range)
    loff_t offset = *in_offset;
    ssize_t copied = syscall(SYS_copy_file_range, in, &offset, out, NULL, length, 0);
    if (copied > 0) *in_offset = offset;
    return copied;
#else
    (void)in;
    (void)in_offset;
    (void)out;
    (void)length;
    errno = ENOSYS;
    return -1;
#endif
}

void csystem_will_need(int fd, off_t offset, off_t length) {
#if defined(__linux__)
    (void)posix_fadvise(fd, offset, length, POSIX_FADV_WILLNEED);
#elif defined(__APPLE__)
    // F_RDADVISE takes an int count: advise in pieces.
    while (length > 0) {
        struct radvisory advice;
        advice.ra_offset = offset;
        advice.ra_count = length > INT_MAX ? INT_MAX : (int)length;
        if (fcntl(fd, F_RDADVISE, &advice) == -1) return;
        offset += advice.ra_count;
        length -= advice.ra_count;
    }
#else
    (void)fd;
    (void)offset;
    (void)length;
#endif
}

void csystem_start_writeback(int fd, off_t offset, off_t length) {
#if defined(__linux__)
    (void)sync_file_range(fd, offset, length, SYNC_FILE_RANGE_WRITE);
#else
    (void)fd;
    (void)offset;
    (void)length;
#endif
}

int csystem_full_sync(int fd) {
#if defined(__APPLE__)
    if (fcntl(fd, F_FULLFSYNC) == 0) return 0;
    // ENOTSUP, EINVAL or ENOTTY on file systems without it (SMB, FUSE, some external
    // drives): what fsync gives is the best there is.
#endif
    return fsync(fd);
}

int csystem_sync_file_system(int fd) {
#if defined(__linux__)
    return syncfs(fd);
#else
    (void)fd;
    errno = ENOSYS;
    return -1;
#endif
}

int csystem_can_sync_file_system(void) {
#if defined(__linux__)
    return 1;
#else
    return 0;
#endif
}

int csystem_terminal_columns(int fd) {
    struct winsize size;
    if (ioctl(fd, TIOCGWINSZ, &size) != 0) return 0;
    return (int)size.ws_col;
}

struct csystem_lock {
    pthread_mutex_t mutex;
};

csystem_lock *csystem_lock_create(void) {
    csystem_lock *lock = malloc(sizeof *lock);
    if (lock == NULL) return NULL;
    if (pthread_mutex_init(&lock->mutex, NULL) != 0) {
        free(lock);
        return NULL;
    }
    return lock;
}

void csystem_lock_destroy(csystem_lock *lock) {
    if (lock == NULL) return;
    (void)pthread_mutex_destroy(&lock->mutex);
    free(lock);
}

void csystem_lock_lock(csystem_lock *lock) {
    if (pthread_mutex_lock(&lock->mutex) != 0) abort();
}

void csystem_lock_unlock(csystem_lock *lock) {
    if (pthread_mutex_unlock(&lock->mutex) != 0) abort();
}

#if defined(__linux__) && defined(SYS_getdents64)
// The record getdents64(2) fills: glibc's struct dirent64 has this layout, but readdir(3)
// allocates (opendir) and is not async-signal-safe, so the system call is made directly.
struct csystem_dirent64 {
    uint64_t d_ino;
    int64_t d_off;
    unsigned short d_reclen;
    unsigned char d_type;
    char d_name[];
};
#endif

int csystem_remove_folder(const char *path) {
#if defined(__linux__) && defined(SYS_getdents64)
    int fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd >= 0) {
        // Entries not yet removed are listed exactly once while others are unlinked
        // (POSIX readdir); the loop ends when the kernel has no more (0) or fails (< 0).
        _Alignas(8) char buffer[4096];
        long count;
        while ((count = syscall(SYS_getdents64, fd, buffer, sizeof buffer)) > 0) {
            for (long offset = 0; offset < count;) {
                struct csystem_dirent64 *entry = (struct csystem_dirent64 *)(buffer + offset);
                if (entry->d_reclen == 0 || entry->d_reclen > count - offset) break;
                offset += entry->d_reclen;
                const char *name = entry->d_name;
                if (name[0] == '.' && (name[1] == 0 || (name[1] == '.' && name[2] == 0))) continue;
                unlinkat(fd, name, 0);
            }
        }
        close(fd);
    }
#endif
    return rmdir(path);
}

uint64_t csystem_atomic_or(uint64_t *word, uint64_t bits) {
    return __atomic_fetch_or(word, bits, __ATOMIC_RELEASE);
}

uint64_t csystem_atomic_and(uint64_t *word, uint64_t bits) {
    return __atomic_fetch_and(word, bits, __ATOMIC_RELEASE);
}

uint64_t csystem_atomic_load(const uint64_t *word) {
    return __atomic_load_n(word, __ATOMIC_ACQUIRE);
}

struct csystem_thread {
    pthread_t thread;
};

csystem_thread *csystem_thread_start(void *(*body)(void *), void *context) {
    csystem_thread *handle = malloc(sizeof *handle);
    if (handle == NULL) return NULL;
    int status = pthread_create(&handle->thread, NULL, body, context);
    if (status != 0) {
        free(handle);
        errno = status;
        return NULL;
    }
    return handle;
}

void csystem_thread_join(csystem_thread *thread) {
    if (thread == NULL) return;
    (void)pthread_join(thread->thread, NULL);
    free(thread);
}

void csystem_thread_detach(csystem_thread *thread) {
    if (thread == NULL) return;
    (void)pthread_detach(thread->thread);
    free(thread);
}

int csystem_copy_xattrs(int from, int to) {
#if defined(__linux__) || defined(__APPLE__)
#if defined(__APPLE__)
#define CSYSTEM_LIST(fd, buffer, size) flistxattr(fd, buffer, size, 0)
#define CSYSTEM_GET(fd, name, value, size) fgetxattr(fd, name, value, size, 0, 0)
#define CSYSTEM_SET(fd, name, value, size) fsetxattr(fd, name, value, size, 0, 0)
#else
#define CSYSTEM_LIST(fd, buffer, size) flistxattr(fd, buffer, size)
#define CSYSTEM_GET(fd, name, value, size) fgetxattr(fd, name, value, size)
#define CSYSTEM_SET(fd, name, value, size) fsetxattr(fd, name, value, size, 0)
#endif
    ssize_t size = CSYSTEM_LIST(from, NULL, 0);
    if (size <= 0) return size < 0 && errno != ENOTSUP ? -1 : 0;
    char *names = malloc((size_t)size);
    if (!names) return -1;
    size = CSYSTEM_LIST(from, names, (size_t)size);
    if (size < 0) {
        free(names);
        return -1;
    }
    int failed = 0;
    for (char *name = names; name < names + size; name += strlen(name) + 1) {
        ssize_t length = CSYSTEM_GET(from, name, NULL, 0);
        void *value = length >= 0 ? malloc(length > 0 ? (size_t)length : 1) : NULL;
        if (!value) {
            failed++;
            continue;
        }
        length = CSYSTEM_GET(from, name, value, (size_t)length);
        if (length < 0 || CSYSTEM_SET(to, name, value, (size_t)length) != 0) failed++;
        free(value);
    }
    free(names);
    return failed;
#else
    (void)from;
    (void)to;
    return 0;
#endif
}
