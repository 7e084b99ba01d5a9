/* SPDX-License-Identifier: MIT */
/* ll_spawn_ex: what Popen offers beyond ll_process_options. Pass fds keep
 * their number and content (close-on-exec cleared) while other fds close;
 * inherit_fds keeps exactly the fds without FD_CLOEXEC; umask, a process
 * group joined, the pipes' size, uid/gid/groups (as root; -EPERM
 * otherwise), crossed stdio; and every malformed extra refused with the
 * loop still running and nothing left open. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "proc_helpers.h"

/* Runs argv with stdout piped (stdin, stderr /dev/null) under extra, to
 * the end; the spawn's return code. */
static int run_ex(ll_loop loop, const char *const *argv, int flags, const ll_spawn_extra *x, struct plog *l) {
    ll_process_options o = {.file = argv[0], .argv = argv, .flags = flags,
                            .stdio = {LL_STDIO_DEVNULL, LL_STDIO_PIPE, LL_STDIO_DEVNULL}};
    ll_process p = 0;
    int rc = ll_spawn_ex(loop, &o, x, plog_fn, l, &p);
    if (rc != 0)
        return rc;
    struct plog_done d = {l, 2};
    RUN_UNTIL(loop, plog_all_done, &d, 10);
    ll_release(p);
    return 0;
}

/* A pass fd is the child's at the same number, with the same content, even
 * though the host marked it close-on-exec; a host fd without CLOEXEC that
 * is not passed is closed in the child. */
static void test_pass_fds(void) {
    ll_loop loop = new_loop();
    int p[2];
    CHECK_EQ_INT(pipe2(p, O_CLOEXEC), 0);
    CHECK_EQ_INT(write(p[1], "through fd\n", 11), 11);
    close(p[1]);
    int stray = open("/dev/null", O_RDONLY); /* no CLOEXEC: would leak */
    CHECK(stray > 2);
    char script[256];
    snprintf(script, sizeof script, "cat /dev/fd/%d; [ -e /proc/$$/fd/%d ] && echo stray open; echo done", p[0], stray);
    const char *const argv[] = {"/bin/sh", "-c", script, NULL};
    int fds[2] = {p[0], p[0]}; /* listed twice: once is enough */
    ll_spawn_extra x = LL_SPAWN_EXTRA_INIT;
    x.pass_fds = fds;
    x.n_pass_fds = 2;
    struct plog l;
    memset(&l, 0, sizeof l);
    CHECK_EQ_INT(run_ex(loop, argv, 0, &x, &l), 0);
    CHECK_EQ_STR(l.out[1], "through fd\ndone\n");
    CHECK_EQ_INT(l.code, 0);
    /* The host's fd is untouched: still close-on-exec. */
    CHECK_EQ_INT(fcntl(p[0], F_GETFD), FD_CLOEXEC);
    close(p[0]);
    close(stray);
    ll_release(loop);
}

/* inherit_fds (close_fds=False): every fd the host left inheritable is
 * open in the child, a close-on-exec one is not. */
static void test_inherit_fds(void) {
    ll_loop loop = new_loop();
    int keep = open("/dev/null", O_RDONLY);
    int drop = open("/dev/null", O_RDONLY | O_CLOEXEC);
    char script[256];
    snprintf(script, sizeof script, "[ -e /proc/$$/fd/%d ] && echo keep; [ -e /proc/$$/fd/%d ] && echo drop; echo end",
             keep, drop);
    const char *const argv[] = {"/bin/sh", "-c", script, NULL};
    ll_spawn_extra x = LL_SPAWN_EXTRA_INIT;
    x.inherit_fds = 1;
    struct plog l;
    memset(&l, 0, sizeof l);
    CHECK_EQ_INT(run_ex(loop, argv, 0, &x, &l), 0);
    CHECK_EQ_STR(l.out[1], "keep\nend\n");
    /* Without it (the default) neither is. */
    memset(&l, 0, sizeof l);
    ll_spawn_extra none = LL_SPAWN_EXTRA_INIT;
    CHECK_EQ_INT(run_ex(loop, argv, 0, &none, &l), 0);
    CHECK_EQ_STR(l.out[1], "end\n");
    close(keep);
    close(drop);
    ll_release(loop);
}

static void test_umask(void) {
    ll_loop loop = new_loop();
    const char *const argv[] = {"/bin/sh", "-c", "umask", NULL};
    ll_spawn_extra x = LL_SPAWN_EXTRA_INIT;
    x.umask = 027;
    struct plog l;
    memset(&l, 0, sizeof l);
    CHECK_EQ_INT(run_ex(loop, argv, 0, &x, &l), 0);
    CHECK_EQ_STR(l.out[1], "0027\n");
    mode_t mine = umask(022); /* the host's own is unchanged */
    umask(mine);
    CHECK(mine != 027);
    ll_release(loop);
}

/* The process group of the child that printed /proc/self/stat. */
static long stat_pgrp(const char *stat) {
    const char *p = strrchr(stat, ')');
    long pgrp = -1;
    if (p == NULL || sscanf(p + 2, "%*c %*d %ld", &pgrp) != 1)
        return -1;
    return pgrp;
}

/* A first child leads a new group (pgid 0), a second joins it (pgid = the
 * first's pid). */
static void test_pgid_join(void) {
    ll_loop loop = new_loop();
    const char *const sleeper[] = {"sleep", "10", NULL};
    ll_process_options o = {.file = "sleep", .argv = sleeper,
                            .stdio = {LL_STDIO_DEVNULL, LL_STDIO_DEVNULL, LL_STDIO_DEVNULL}};
    ll_spawn_extra x = LL_SPAWN_EXTRA_INIT;
    x.pgid = 0;
    struct plog first;
    memset(&first, 0, sizeof first);
    ll_process leader = 0;
    CHECK_EQ_INT(ll_spawn_ex(loop, &o, &x, plog_fn, &first, &leader), 0);
    int pid = 0;
    CHECK_EQ_INT(ll_process_pid(leader, &pid), 0);
    CHECK_EQ_INT(getpgid(pid), pid);
    CHECK(getpgid(0) != pid);

    const char *const argv[] = {"cat", "/proc/self/stat", NULL};
    ll_spawn_extra join = LL_SPAWN_EXTRA_INIT;
    join.pgid = pid;
    struct plog l;
    memset(&l, 0, sizeof l);
    CHECK_EQ_INT(run_ex(loop, argv, 0, &join, &l), 0);
    CHECK_EQ_INT(stat_pgrp(l.out[1]), pid);
    CHECK_EQ_INT(l.code, 0);

    CHECK_EQ_INT(ll_process_kill(leader), 0);
    CHECK(RUN_UNTIL(loop, plog_exited, &first, 10));
    ll_release(leader);
    ll_release(loop);
}

/* pipe_size sizes every pipe ll_spawn_ex makes (the pipe is one object:
 * the parent's end shows the size the child's has). */
static void test_pipe_size(void) {
    ll_loop loop = new_loop();
    const char *const argv[] = {"cat", NULL};
    ll_process_options o = {.file = "cat", .argv = argv, .stdio = {LL_STDIO_PIPE, LL_STDIO_PIPE, LL_STDIO_DEVNULL}};
    ll_spawn_extra x = LL_SPAWN_EXTRA_INIT;
    x.pipe_size = 256 * 1024;
    struct plog l;
    memset(&l, 0, sizeof l);
    ll_process p = 0;
    CHECK_EQ_INT(ll_spawn_ex(loop, &o, &x, plog_fn, &l, &p), 0);
    for (int fd = 0; fd < 2; fd++) {
        ll_transport t = 0;
        CHECK_EQ_INT(ll_process_pipe(p, fd, &t), 0);
        CHECK_EQ_INT(fcntl(ll_transport_fd(t), F_GETPIPE_SZ), 256 * 1024);
        if (fd == 0)
            CHECK_EQ_INT(ll_transport_close(t), 0); /* cat sees EOF and ends */
    }
    struct plog_done d = {&l, 3};
    CHECK(RUN_UNTIL(loop, plog_all_done, &d, 10));
    ll_release(p);
    ll_release(loop);
}

/* As root: the child runs as uid/gid 65534 with the groups given. As
 * anyone else: the setresuid is refused, and that is ll_spawn_ex's
 * -EPERM, not a child exiting 127. */
static void test_credentials(void) {
    ll_loop loop = new_loop();
    const char *const argv[] = {"/bin/sh", "-c", "id -u; id -g; id -G", NULL};
    unsigned groups[] = {65534, 4242};
    ll_spawn_extra x = LL_SPAWN_EXTRA_INIT;
    x.uid = 65534;
    x.gid = 65534;
    x.groups = groups;
    x.n_groups = 2;
    struct plog l;
    memset(&l, 0, sizeof l);
    if (geteuid() == 0) {
        CHECK_EQ_INT(run_ex(loop, argv, 0, &x, &l), 0);
        CHECK_EQ_STR(l.out[1], "65534\n65534\n65534 4242\n");
        /* gid alone, groups dropped: uid stays root's. */
        ll_spawn_extra g = LL_SPAWN_EXTRA_INIT;
        g.gid = 4242;
        g.n_groups = 0;
        memset(&l, 0, sizeof l);
        CHECK_EQ_INT(run_ex(loop, argv, 0, &g, &l), 0);
        CHECK_EQ_STR(l.out[1], "0\n4242\n4242\n");
    } else {
        CHECK_EQ_INT(run_ex(loop, argv, 0, &x, &l), -EPERM);
        ll_spawn_extra u = LL_SPAWN_EXTRA_INIT;
        u.uid = (int)geteuid() + 1;
        CHECK_EQ_INT(run_ex(loop, argv, 0, &u, &l), -EPERM);
        CHECK_EQ_INT(l.exited, 0);
    }
    check_still_runs(loop);
    ll_release(loop);
}

/* Stdout from the host's fd 0 while stdin is a pipe: the pipe's dup2 onto
 * fd 0 must not clobber stdout's source. */
static void test_crossed_stdio(void) {
    ll_loop loop = new_loop();
    int saved0 = dup(0);
    int p[2];
    CHECK_EQ_INT(pipe2(p, O_CLOEXEC), 0);
    CHECK_EQ_INT(dup2(p[1], 0), 0);
    close(p[1]);
    const char *const argv[] = {"echo", "crossed", NULL};
    ll_process_options o = {.file = "echo", .argv = argv, .stdio = {LL_STDIO_PIPE, 0, LL_STDIO_DEVNULL}};
    ll_spawn_extra x = LL_SPAWN_EXTRA_INIT;
    struct plog l;
    memset(&l, 0, sizeof l);
    ll_process pr = 0;
    CHECK_EQ_INT(ll_spawn_ex(loop, &o, &x, plog_fn, &l, &pr), 0);
    dup2(saved0, 0); /* the only write end left is the child's */
    close(saved0);
    CHECK(RUN_UNTIL(loop, plog_exited, &l, 10));
    char buf[64] = {0};
    ssize_t n = read(p[0], buf, sizeof buf - 1);
    CHECK_EQ_INT((int)n, 8);
    CHECK_EQ_STR(buf, "crossed\n");
    close(p[0]);
    ll_release(pr);
    ll_release(loop);
}

/* Each malformed extra is refused before anything is made: no child, no
 * fd, and the loop still runs. */
static void test_bad_extras(void) {
    ll_loop loop = new_loop();
    const char *const argv[] = {"true", NULL};
    ll_process_options o = {.file = "true", .argv = argv,
                            .stdio = {LL_STDIO_PIPE, LL_STDIO_PIPE, LL_STDIO_PIPE}};
    int neg[] = {-1};
    int closed_fd = 1000;
    while (fcntl(closed_fd, F_GETFD) >= 0)
        closed_fd++;
    int shut[] = {closed_fd};
    union {
        ll_spawn_extra x; /* for the alignment */
        unsigned char bytes[sizeof(ll_spawn_extra) + 8];
    } big;
    struct bad {
        const char *what;
        ll_spawn_extra x;
        int flags, want;
    } cases[] = {
        {"size 0", {.size = 0}, 0, LL_EINVAL},
        {"size short", LL_SPAWN_EXTRA_INIT, 0, LL_EINVAL},
        {"n_pass_fds < 0", LL_SPAWN_EXTRA_INIT, 0, LL_EINVAL},
        {"NULL pass_fds", LL_SPAWN_EXTRA_INIT, 0, LL_EINVAL},
        {"negative fd", LL_SPAWN_EXTRA_INIT, 0, LL_EINVAL},
        {"fd not open", LL_SPAWN_EXTRA_INIT, 0, -EBADF},
        {"n_groups -2", LL_SPAWN_EXTRA_INIT, 0, LL_EINVAL},
        {"NULL groups", LL_SPAWN_EXTRA_INIT, 0, LL_EINVAL},
        {"uid -2", LL_SPAWN_EXTRA_INIT, 0, LL_EINVAL},
        {"gid -5", LL_SPAWN_EXTRA_INIT, 0, LL_EINVAL},
        {"umask 01000", LL_SPAWN_EXTRA_INIT, 0, LL_EINVAL},
        {"pgid -2", LL_SPAWN_EXTRA_INIT, 0, LL_EINVAL},
        {"pgid with a session", LL_SPAWN_EXTRA_INIT, LL_PROCESS_NEW_SESSION, LL_EINVAL},
        {"join with a new group", LL_SPAWN_EXTRA_INIT, LL_PROCESS_NEW_GROUP, LL_EINVAL},
        {"pipe_size -1", LL_SPAWN_EXTRA_INIT, 0, LL_EINVAL},
        {"no such group", LL_SPAWN_EXTRA_INIT, 0, -EPERM},
    };
    cases[1].x.size = sizeof(ll_spawn_extra) - 1;
    cases[2].x.n_pass_fds = -1;
    cases[3].x.n_pass_fds = 1;
    cases[4].x.pass_fds = neg, cases[4].x.n_pass_fds = 1;
    cases[5].x.pass_fds = shut, cases[5].x.n_pass_fds = 1;
    cases[6].x.n_groups = -2;
    cases[7].x.n_groups = 1;
    cases[8].x.uid = -2;
    cases[9].x.gid = -5;
    cases[10].x.umask = 01000;
    cases[11].x.pgid = -2;
    cases[12].x.pgid = 0;
    cases[13].x.pgid = 1;
    cases[14].x.pipe_size = -1;
    cases[15].x.pgid = 0x7ffffff0; /* no such group: setpgid's EPERM */
    int before = count_fds();
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        o.flags = cases[i].flags;
        ll_process p = 0;
        int rc = ll_spawn_ex(loop, &o, &cases[i].x, plog_fn, NULL, &p);
        if (rc != cases[i].want)
            CHECK_FAIL_AT(__FILE__, __LINE__, "%s: rc %d, want %d", cases[i].what, rc, cases[i].want);
        else
            check_passed++;
        CHECK_EQ_INT((int)p, 0);
        CHECK_EQ_INT(count_fds(), before);
        check_still_runs(loop);
    }
    o.flags = 0;
    /* A larger size (a newer header's struct) is fine while its tail is
     * zero, and refused once a field this library does not know is set. */
    memset(&big, 0, sizeof big);
    ll_spawn_extra init = LL_SPAWN_EXTRA_INIT;
    init.size = sizeof big;
    memcpy(big.bytes, &init, sizeof init);
    ll_process p = 0;
    struct plog l;
    memset(&l, 0, sizeof l);
    CHECK_EQ_INT(ll_spawn_ex(loop, &o, &big.x, plog_fn, &l, &p), 0);
    struct plog_done d = {&l, 7};
    CHECK(RUN_UNTIL(loop, plog_all_done, &d, 10));
    ll_release(p);
    big.bytes[sizeof(ll_spawn_extra) + 3] = 1;
    p = 0;
    CHECK_EQ_INT(ll_spawn_ex(loop, &o, &big.x, plog_fn, NULL, &p), LL_EINVAL);
    init.size = 1 << 20; /* absurd */
    CHECK_EQ_INT(ll_spawn_ex(loop, &o, &init, plog_fn, NULL, &p), LL_EINVAL);
    CHECK_EQ_INT(ll_spawn_ex(loop, NULL, &init, plog_fn, NULL, &p), LL_EINVAL);
    CHECK_EQ_INT((int)p, 0);
    /* extra NULL is ll_spawn. */
    memset(&l, 0, sizeof l);
    CHECK_EQ_INT(ll_spawn_ex(loop, &o, NULL, plog_fn, &l, &p), 0);
    CHECK(RUN_UNTIL(loop, plog_all_done, &d, 10));
    CHECK_EQ_INT(l.code, 0);
    ll_release(p);
    check_still_runs(loop);
    ll_release(loop);
}

int main(void) {
    RUN_TEST(test_pass_fds);
    RUN_TEST(test_inherit_fds);
    RUN_TEST(test_umask);
    RUN_TEST(test_pgid_join);
    RUN_TEST(test_pipe_size);
    RUN_TEST(test_credentials);
    RUN_TEST(test_crossed_stdio);
    RUN_TEST(test_bad_extras);
    return CHECK_REPORT();
}
