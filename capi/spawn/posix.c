/* SPDX-License-Identifier: MIT */
/* Spawning for the C ABI where it is not Linux (vfork_linux.c is):
 * posix_spawn, whose file actions close every fd but the child's stdio with
 * one closefrom (posix_spawn_file_actions_addclosefrom_np) instead of one
 * close() per fd number, and a pidfd opened for the child afterwards where
 * there is one. The loop decides what to run and watches the exit; this
 * file only starts.
 *
 * Of ll_spawn_ex's extras, posix_spawn has no step for a uid, gid, groups
 * or umask, and cannot keep pass fds while closing the others: those are
 * -ENOTSUP here. A process group (joined or new) and inherit_fds work, and
 * pass fds together with inherit_fds (a dup2 onto itself clears
 * close-on-exec). */
#define _GNU_SOURCE
#include <errno.h>
#include <signal.h>
#include <spawn.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "spawn.h"

#ifndef SYS_pidfd_open
#define SYS_pidfd_open 434
#endif

#ifndef __linux__
int ll__posix_spawn(const char *path, char *const argv[], char *const envp[], const char *dir, int fd0, int fd1,
                    int fd2, int flags, const struct ll__spawn_x *x, int *pid_out, int *pidfd_out) {
    if (x->uid >= 0 || x->gid >= 0 || x->ngroups >= 0 || x->umask >= 0 || (x->nkeep > 0 && !x->inherit))
        return -ENOTSUP;
    posix_spawn_file_actions_t fa;
    posix_spawnattr_t attr;
    int src[3] = {fd0, fd1, fd2};
    int rc = posix_spawn_file_actions_init(&fa);
    if (rc != 0)
        return -rc;
    rc = posix_spawnattr_init(&attr);
    if (rc != 0) {
        posix_spawn_file_actions_destroy(&fa);
        return -rc;
    }
    /* dup2 onto itself clears FD_CLOEXEC (glibc 2.29+): an inherited fd
     * stays open across exec even if the host marked it close-on-exec. */
    for (int i = 0; i < 3 && rc == 0; i++)
        rc = posix_spawn_file_actions_adddup2(&fa, src[i], i);
    for (int i = 0; i < x->nkeep && rc == 0; i++)
        rc = posix_spawn_file_actions_adddup2(&fa, x->keep[i], x->keep[i]);
    if (rc == 0 && !x->inherit)
        rc = posix_spawn_file_actions_addclosefrom_np(&fa, 3);
    if (rc == 0 && dir != NULL && dir[0] != 0)
        rc = posix_spawn_file_actions_addchdir_np(&fa, dir);
    short sflags = POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF;
    if (flags & 1)
        sflags |= POSIX_SPAWN_SETSID;
    else if (x->pgid >= 0)
        sflags |= POSIX_SPAWN_SETPGROUP;
    if (rc == 0)
        rc = posix_spawnattr_setflags(&attr, sflags);
    sigset_t none, dfl;
    sigemptyset(&none);
    /* Python's restore_signals: what a host ignores for itself (SIGPIPE,
     * SIGXFSZ) is back at its default in the child. */
    sigemptyset(&dfl);
    sigaddset(&dfl, SIGPIPE);
    sigaddset(&dfl, SIGXFSZ);
    if (rc == 0)
        rc = posix_spawnattr_setsigmask(&attr, &none);
    if (rc == 0)
        rc = posix_spawnattr_setsigdefault(&attr, &dfl);
    if (rc == 0 && x->pgid >= 0 && !(flags & 1))
        rc = posix_spawnattr_setpgroup(&attr, x->pgid);
    pid_t pid = -1;
    if (rc == 0)
        rc = posix_spawn(&pid, path, &fa, &attr, argv, envp);
    posix_spawnattr_destroy(&attr);
    posix_spawn_file_actions_destroy(&fa);
    if (rc != 0)
        return -rc;
    *pid_out = (int)pid;
    /* The child is ours and unreaped, so its pid is still its own here. */
    *pidfd_out = (int)syscall(SYS_pidfd_open, pid, 0);
    if (*pidfd_out < 0)
        *pidfd_out = -1;
    return 0;
}
#endif
