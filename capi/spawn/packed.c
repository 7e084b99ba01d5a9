/* SPDX-License-Identifier: MIT */
/* ll__spawn_packed: ll__posix_spawn from one buffer of NUL-terminated
 * strings that Go lays out (spawner.go), so a spawn crosses into C once
 * instead of once per malloc, string and free (14 crossings before). The
 * buffer is Go memory holding no Go pointer, read only during the call:
 * the vfork child reads it too, and it has exec'd or exited by the time
 * ll__posix_spawn returns. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "spawn.h"

extern char **environ;

/* Pointer arrays up to this many entries live on the stack. */
#define SMALL_ARRAYS 64

/* Points out[0..n) at the next n strings of *p and NULL-terminates out. */
static void unpack(const char **p, char **out, int n) {
    for (int i = 0; i < n; i++) {
        out[i] = (char *)*p;
        *p += strlen(*p) + 1;
    }
    out[n] = NULL;
}

int ll__spawn_packed(const char *buf, int argc, int envc, const struct ll__spawn_x *xin, const int *keep,
                     const unsigned *groups, int fd0, int fd1, int fd2, int flags, int *pid_out, int *pidfd_out) {
    if (argc < 1 || envc < -1)
        return -EINVAL;
    size_t n = (size_t)argc + 1 + (envc > 0 ? (size_t)envc + 1 : 1);
    char *small[SMALL_ARRAYS];
    char **arrays = small;
    if (n > SMALL_ARRAYS && (arrays = malloc(n * sizeof *arrays)) == NULL)
        return -ENOMEM;
    const char *p = buf;
    const char *path = p;
    p += strlen(p) + 1;
    const char *dir = p;
    p += strlen(p) + 1;
    char **argv = arrays;
    unpack(&p, argv, argc);
    char **envp = environ; /* envc -1: the host's own, as it is now */
    if (envc >= 0) {
        envp = arrays + argc + 1;
        unpack(&p, envp, envc);
    }
    /* The pointers into Go memory go into our copy, not Go's struct. */
    struct ll__spawn_x x = *xin;
    x.keep = keep;
    x.groups = groups;
    int rc = ll__posix_spawn(path, argv, envp, dir, fd0, fd1, fd2, flags, &x, pid_out, pidfd_out);
    if (arrays != small)
        free(arrays);
    return rc;
}
