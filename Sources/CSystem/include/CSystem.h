// System calls that Glibc's Swift overlay does not expose. Each wrapper returns what the
// system call returns (-1 with errno set on failure).
#ifndef CSYSTEM_H
#define CSYSTEM_H

#include <sys/types.h>

// Renames `from` to `to` (both relative to the current directory or absolute) only if `to`
// does not exist: renameat2(RENAME_NOREPLACE) on Linux. Fails with ENOSYS or EINVAL where the
// kernel or file system lacks it, and with ENOSYS on systems other than Linux.
int csystem_rename_noreplace(const char *from, const char *to);

// copy_file_range(2) on Linux (ENOSYS elsewhere): copies `length` bytes from `in` at `*in_offset`
// to `out` at its current position, in the kernel. Returns the bytes copied.
ssize_t csystem_copy_file_range(int in, off_t *in_offset, int out, size_t length);

#endif
