/* SPDX-License-Identifier: MIT */
/* Internal: starting a child for ll_spawn (vfork_linux.c: a vfork
 * clone; posix.c: posix_spawn elsewhere). Not installed. */
#ifndef LIBLOOP_PROCSPAWN_H
#define LIBLOOP_PROCSPAWN_H

/* The extras of ll_spawn_ex, as the core normalized them. */
struct ll__spawn_x {
    const int *keep;         /* fds >= 3 kept open at their numbers: sorted, unique */
    int nkeep;
    int inherit;             /* close nothing: exec closes the close-on-exec fds */
    int uid, gid;            /* -1: unchanged */
    const unsigned *groups;  /* supplementary groups when ngroups >= 0 */
    int ngroups;             /* -1: unchanged */
    int umask;               /* -1: unchanged */
    int pgid;                /* -1: none; 0: a new group; > 0: join it */
};

/* Start path with fds 0..2 from fd0..fd2 (no source below 3 but its own
 * target), x's pass fds and no other fd; flags 1: new session. 0, or
 * -errno (ENOENT, EACCES ... from the exec itself, EPERM from setuid ...,
 * ENOTSUP for an extra this platform cannot do). *pidfd_out is -1 where
 * the kernel has no pidfd. */
int ll__posix_spawn(const char *path, char *const argv[], char *const envp[], const char *dir, int fd0, int fd1,
                    int fd2, int flags, const struct ll__spawn_x *x, int *pid_out, int *pidfd_out);

/* ll__posix_spawn with path, dir, the argc argv strings and the envc env
 * strings (envc -1: the host's environ) one after another in buf, each
 * NUL-terminated; xin's keep and groups are replaced by the arguments. */
int ll__spawn_packed(const char *buf, int argc, int envc, const struct ll__spawn_x *xin, const int *keep,
                     const unsigned *groups, int fd0, int fd1, int fd2, int flags, int *pid_out, int *pidfd_out);

#endif
