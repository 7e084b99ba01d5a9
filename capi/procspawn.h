/* SPDX-License-Identifier: MIT */
/* Internal: posix_spawn for ll_spawn (procspawn.c). Not installed. */
#ifndef LIBLOOP_PROCSPAWN_H
#define LIBLOOP_PROCSPAWN_H

/* Start path with fds 0..2 from fd0..fd2 and no other fd; flags 1: new
 * session, 2: new process group. 0, or -errno (ENOENT, EACCES ... from the
 * exec itself). *pidfd_out is -1 where the kernel has no pidfd_open. */
int ll__posix_spawn(const char *path, char *const argv[], char *const envp[], const char *dir, int fd0, int fd1,
                    int fd2, int flags, int *pid_out, int *pidfd_out);

#endif
