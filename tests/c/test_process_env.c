/* SPDX-License-Identifier: MIT */
/* What a child starts with besides its stdio: SIGPIPE and SIGXFSZ at their
 * defaults even when the host ignores them (as Python's restore_signals),
 * no blocked signal, and no fd of the host however high its number; a
 * PATH the host set after start finds the program; the loop's /dev/null
 * is gone with the loop. */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "proc_helpers.h"

static void test_ignored_signals_are_default_in_child(void) {
    ll_loop loop = new_loop();
    check_child_signals_clean(loop);
    ll_release(loop);
}

/* A program that cannot run is the spawn's error, and its child (which
 * got as far as the failed exec) is reaped at once: no zombie, no fd. */
static void test_failed_exec_leaves_nothing(void) { check_failed_execs_leave_nothing(201, LL_STDIO_PIPE); }

static void test_high_fd_not_inherited(void) {
    int fd = open("/dev/null", O_RDONLY); /* no O_CLOEXEC, as a careless host */
    CHECK(fd >= 0);
    int high = dup2(fd, 3000);
    CHECK_EQ_INT(high, 3000);
    ll_loop loop = new_loop();
    struct plog l;
    memset(&l, 0, sizeof l);
    const char *const argv[] = {"sh", "-c", "test -e /proc/self/fd/3000 && echo inherited || echo closed", NULL};
    CHECK(run_child(loop, argv, LL_STDIO_DEVNULL, LL_STDIO_PIPE, LL_STDIO_DEVNULL, &l));
    CHECK_EQ_STR(l.out[1], "closed\n");
    ll_release(loop);
    close(high);
    close(fd);
}

/* PATH as the host set it with setenv (not the Go runtime's snapshot of
 * the environment at load) is the one searched for a bare program name. */
static void test_path_set_by_host_is_searched(void) {
    char dir[] = "/tmp/ll_path_XXXXXX";
    CHECK(mkdtemp(dir) != NULL);
    char prog[64];
    snprintf(prog, sizeof prog, "%s/ll-only-here", dir);
    FILE *f = fopen(prog, "w");
    CHECK(f != NULL);
    fputs("#!/bin/sh\necho found-by-path\n", f);
    fclose(f);
    CHECK_EQ_INT(chmod(prog, 0755), 0);
    const char *old = getenv("PATH");
    char *saved = old ? strdup(old) : NULL;
    char path[256];
    snprintf(path, sizeof path, "%s:%s", dir, saved ? saved : "/usr/bin:/bin");
    CHECK_EQ_INT(setenv("PATH", path, 1), 0);

    ll_loop loop = new_loop();
    struct plog l;
    memset(&l, 0, sizeof l);
    const char *const argv[] = {"ll-only-here", NULL};
    CHECK(run_child(loop, argv, LL_STDIO_DEVNULL, LL_STDIO_PIPE, LL_STDIO_DEVNULL, &l));
    CHECK_EQ_STR(l.out[1], "found-by-path\n");
    ll_release(loop);

    if (saved) {
        setenv("PATH", saved, 1);
        free(saved);
    }
    unlink(prog);
    rmdir(dir);
}

/* The loop keeps one /dev/null for all its children; closing the loop
 * closes it, so a host that makes and ends loops leaks no fd. */
static void test_devnull_closed_with_loop(void) {
    const char *const argv[] = {"true", NULL};
    for (int round = 0; round < 2; round++) {
        int before = count_fds();
        ll_loop loop = new_loop();
        struct plog l;
        memset(&l, 0, sizeof l);
        CHECK(run_child(loop, argv, LL_STDIO_DEVNULL, LL_STDIO_DEVNULL, LL_STDIO_DEVNULL, &l));
        CHECK_EQ_INT(l.code, 0);
        memset(&l, 0, sizeof l);
        CHECK(run_child(loop, argv, LL_STDIO_DEVNULL, LL_STDIO_DEVNULL, LL_STDIO_DEVNULL, &l));
        CHECK_EQ_INT(l.code, 0);
        ll_release(loop);
        if (round == 1) /* round 0 may start what the library keeps for good */
            CHECK_EQ_INT(count_fds(), before);
    }
}

/* Many arguments and variables, each one intact and in order: the
 * spawner hands them to C packed in one buffer and unpacks them into
 * pointer arrays (on the stack up to 64 entries, allocated beyond). */
static void test_many_args_and_vars(void) {
    for (int round = 0; round < 2; round++) {
        int nargs = round ? 300 : 20, nenv = round ? 200 : 10;
        static char args[300][16], vars[200][24];
        const char *argv[305];
        const char *envp[202];
        argv[0] = "sh";
        argv[1] = "-c";
        argv[2] = "echo $# $1 ${300:-none} $V0 $V199 ${V9}";
        argv[3] = "sh";
        for (int i = 0; i < nargs; i++) {
            snprintf(args[i], sizeof args[i], "a%d", i + 1);
            argv[4 + i] = args[i];
        }
        argv[4 + nargs] = NULL;
        for (int i = 0; i < nenv; i++) {
            snprintf(vars[i], sizeof vars[i], "V%d=v%d", i, i);
            envp[i] = vars[i];
        }
        envp[nenv] = NULL;
        ll_loop loop = new_loop();
        struct plog l;
        memset(&l, 0, sizeof l);
        ll_process_options o = {.file = "/bin/sh", .argv = argv, .env = envp,
                                .stdio = {LL_STDIO_DEVNULL, LL_STDIO_PIPE, LL_STDIO_DEVNULL}};
        ll_process p = 0;
        CHECK_EQ_INT(ll_spawn(loop, &o, plog_fn, &l, &p), 0);
        struct plog_done d = {&l, 2};
        CHECK(RUN_UNTIL(loop, plog_all_done, &d, 10));
        CHECK_EQ_STR(l.out[1], round ? "300 a1 a300 v0 v199 v9\n" : "20 a1 none v0 v9\n");
        ll_release(p);
        ll_release(loop);
    }
}

int main(void) {
    alarm(60);
    RUN_TEST(test_ignored_signals_are_default_in_child);
    RUN_TEST(test_high_fd_not_inherited);
    RUN_TEST(test_path_set_by_host_is_searched);
    RUN_TEST(test_devnull_closed_with_loop);
    RUN_TEST(test_failed_exec_leaves_nothing);
    RUN_TEST(test_many_args_and_vars);
    return CHECK_REPORT();
}
