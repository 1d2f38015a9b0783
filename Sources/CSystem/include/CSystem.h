// System calls that Glibc's Swift overlay does not expose. Each wrapper returns what the
// system call returns (-1 with errno set on failure).
#ifndef CSYSTEM_H
#define CSYSTEM_H

#include <stdint.h>
#include <sys/types.h>

// Renames `from` to `to` (both relative to the current directory or absolute) only if `to`
// does not exist: renameat2(RENAME_NOREPLACE) on Linux, renamex_np(RENAME_EXCL) on Darwin.
// Fails with EEXIST when `to` exists, and with ENOSYS, EINVAL or ENOTSUP where the kernel or
// the file system cannot do it (the caller then falls back to link + unlink).
int csystem_rename_noreplace(const char *from, const char *to);

// Swaps `a` and `b` atomically (both must exist): renameat2(RENAME_EXCHANGE) on Linux,
// renamex_np(RENAME_SWAP) on Darwin. Fails with ENOSYS, EINVAL or ENOTSUP where the kernel
// or the file system cannot (the caller then checks and renames).
int csystem_rename_exchange(const char *a, const char *b);

// Tells the kernel that `length` bytes at `offset` will be read soon: posix_fadvise(WILLNEED)
// on Linux, fcntl(F_RDADVISE) on Darwin. Advisory: errors are ignored.
void csystem_will_need(int fd, off_t offset, off_t length);

// copy_file_range(2) on Linux (ENOSYS elsewhere): copies `length` bytes from `in` at `*in_offset`
// to `out` at its current position, in the kernel. Returns the bytes copied.
ssize_t csystem_copy_file_range(int in, off_t *in_offset, int out, size_t length);

// Starts writing `length` bytes of `fd` at `offset` back to disk without waiting for them
// (sync_file_range(SYNC_FILE_RANGE_WRITE) on Linux; nothing elsewhere), so that the final
// fsync finds little left to write. Advisory: errors are ignored (fsync reports real ones).
void csystem_start_writeback(int fd, off_t offset, off_t length);

// Makes the file's data and metadata durable: fsync(2) on Linux (which also flushes the
// drive's volatile cache, where the file system issues the barrier); on Darwin
// fcntl(F_FULLFSYNC), because Darwin's fsync only hands the data to the drive, which may
// keep it in its cache across a power loss (fsync(2) says so and points to F_FULLFSYNC).
// Falls back to fsync where the file system does not implement F_FULLFSYNC. Returns 0, or
// -1 with errno set.
int csystem_full_sync(int fd);

// Flushes every file of the file system holding the open file `fd` to disk in one call:
// syncfs(2) on Linux, which since Linux 5.8 also fails (EIO, ENOSPC...) when a writeback
// error happened on that file system after `fd` was opened. Fails with ENOSYS elsewhere
// (Darwin has no syncfs, and its fsync does not flush the drive's cache: callers there keep
// csystem_full_sync on each file). Returns 0, or -1 with errno set.
int csystem_sync_file_system(int fd);

// 1 where csystem_sync_file_system can work (Linux), 0 where it always fails with ENOSYS.
int csystem_can_sync_file_system(void);

// Copies the extended attributes of the file open as `from` to the one open as `to`
// (flistxattr/fgetxattr/fsetxattr; nothing where the system has none). Returns how many
// could not be copied (a security namespace the process may not write, a file system
// without them), or -1 when they could not be listed.
int csystem_copy_xattrs(int from, int to);

// The width of the terminal on `fd` in columns (ioctl TIOCGWINSZ), or 0 when `fd` is not a
// terminal or the terminal does not say. Swift cannot call the variadic ioctl itself.
int csystem_terminal_columns(int fd);

// A mutual-exclusion lock: a pthread_mutex_t allocated on the heap, because a mutex must
// not move once initialised (a Swift value may). The same code on every platform (no
// os_unfair_lock on Darwin), so that the path tested on Linux is the one apps run.
// `csystem_lock_create` returns NULL when memory or the mutex cannot be had; the others
// abort on an error, which only a misuse (unlocking a lock not held) can cause.
typedef struct csystem_lock csystem_lock;
csystem_lock *csystem_lock_create(void);
void csystem_lock_destroy(csystem_lock *lock);
void csystem_lock_lock(csystem_lock *lock);
void csystem_lock_unlock(csystem_lock *lock);

// Atomic operations on a 64-bit word (the compiler's __atomic builtins, lock-free on every
// platform the package supports, hence usable from a signal handler). `or` and `and` are
// release operations and return the previous value; `load` is an acquire.
uint64_t csystem_atomic_or(uint64_t *word, uint64_t bits);
uint64_t csystem_atomic_and(uint64_t *word, uint64_t bits);
uint64_t csystem_atomic_load(const uint64_t *word);

// Removes the folder `path` with the entries directly in it (files; a subfolder stays, and
// so does the folder then), calling only what a signal handler may: open(2), the
// getdents64 system call into a buffer on the stack, unlinkat(2), close(2), rmdir(2), on
// Linux. Elsewhere (no signal-safe way to list a folder) only rmdir(2): a folder still
// holding files stays. Returns what rmdir returns.
int csystem_remove_folder(const char *path);

// A joinable thread running `body(context)`. pthread_t is an integer in glibc and a
// pointer in Darwin and musl (non-optional in Swift for musl, optional for Darwin); this
// keeps it out of Swift. Returns NULL with errno set when the thread cannot be started
// (`context` is then not passed to anyone). `csystem_thread_join` waits for the thread and
// frees the handle.
typedef struct csystem_thread csystem_thread;
csystem_thread *csystem_thread_start(void *(*body)(void *), void *context);
void csystem_thread_join(csystem_thread *thread);
// Lets the thread run on its own (its resources freed when it ends) and frees the handle.
void csystem_thread_detach(csystem_thread *thread);

#endif
