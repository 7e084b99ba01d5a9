/* SPDX-License-Identifier: MIT */
/* ll_spawn's limits and edge inputs are the system's, as Popen's: argv and
 * env of any length execve takes run (70,000 short arguments, 70,000
 * variables), what execve refuses is -E2BIG; a cwd of "" is no directory
 * (-ENOENT, Popen's FileNotFoundError), not the inherited one. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "proc_helpers.h"

#define MANY 70000

/* Runs sh -c script with extra arguments or variables; out gets stdout. */
static int run_sh(ll_loop loop, const char *script, const char *const *extra_args, size_t nargs,
                  const char *const *env, struct plog *l) {
    const char **argv = calloc(nargs + 5, sizeof *argv);
    size_t k = 0;
    argv[k++] = "sh";
    argv[k++] = "-c";
    argv[k++] = script;
    argv[k++] = "sh";
    for (size_t i = 0; i < nargs; i++)
        argv[k++] = extra_args[i];
    argv[k] = NULL;
    ll_process_options o = {.file = "/bin/sh", .argv = argv, .env = env,
                            .stdio = {LL_STDIO_DEVNULL, LL_STDIO_PIPE, LL_STDIO_INHERIT}};
    ll_process p = 0;
    int rc = ll_spawn(loop, &o, plog_fn, l, &p);
    free(argv);
    if (rc != 0)
        return rc;
    struct plog_done d = {l, 2};
    RUN_UNTIL(loop, plog_all_done, &d, 20);
    ll_release(p);
    return 0;
}

static void test_many_args(void) {
    ll_loop loop = new_loop();
    static struct plog l;
    memset(&l, 0, sizeof l);
    const char **args = calloc(MANY, sizeof *args);
    for (size_t i = 0; i < MANY; i++)
        args[i] = "a";
    CHECK_EQ_INT(run_sh(loop, "echo $#", args, MANY, NULL, &l), 0);
    CHECK_EQ_STR(l.out[1], "70000\n");
    CHECK_EQ_INT(l.code, 0);
    free(args);
    check_still_runs(loop);
    ll_release(loop);
}

static void test_many_env(void) {
    ll_loop loop = new_loop();
    static struct plog l;
    memset(&l, 0, sizeof l);
    const char **env = calloc(MANY + 2, sizeof *env);
    char *text = malloc((size_t)MANY * 16);
    for (size_t i = 0; i < MANY; i++) {
        env[i] = text + i * 16;
        snprintf(text + i * 16, 16, "V%zu=1", i);
    }
    env[MANY] = "LAST=yes";
    env[MANY + 1] = NULL;
    CHECK_EQ_INT(run_sh(loop, "echo $V69999 $LAST", NULL, 0, env, &l), 0);
    CHECK_EQ_STR(l.out[1], "1 yes\n");
    free(env);
    free(text);
    check_still_runs(loop);
    ll_release(loop);
}

/* More than execve takes: its own error, no child. */
static void test_beyond_arg_max(void) {
    ll_loop loop = new_loop();
    static struct plog l;
    memset(&l, 0, sizeof l);
    long argmax = sysconf(_SC_ARG_MAX);
    if (argmax <= 0 || argmax > (64L << 20)) {
        printf("  ARG_MAX %ld: skipped\n", argmax);
        check_passed++;
        ll_release(loop);
        return;
    }
    size_t n = (size_t)argmax / 512 + 16; /* n * 1 KiB > ARG_MAX */
    char *big = malloc(1024);
    memset(big, 'x', 1023);
    big[1023] = '\0';
    const char **args = calloc(n, sizeof *args);
    for (size_t i = 0; i < n; i++)
        args[i] = big;
    CHECK_EQ_INT(run_sh(loop, "exit 0", args, n, NULL, &l), -E2BIG);
    CHECK_EQ_INT(l.exited, 0);
    free(args);
    free(big);
    check_still_runs(loop);
    ll_release(loop);
}

/* More entries than any execve takes (Linux counts a pointer each against
 * at most 6 MiB): refused before anything is made, with execve's answer. */
static void test_past_any_execve(void) {
    ll_loop loop = new_loop();
    size_t n = (1u << 20) + 1;
    const char **argv = calloc(n + 1, sizeof *argv);
    for (size_t i = 0; i < n; i++)
        argv[i] = "";
    argv[0] = "true";
    ll_process_options o = {.file = "true", .argv = argv,
                            .stdio = {LL_STDIO_DEVNULL, LL_STDIO_DEVNULL, LL_STDIO_INHERIT}};
    static struct plog l;
    memset(&l, 0, sizeof l);
    ll_process p = 99;
    CHECK_EQ_INT(ll_spawn(loop, &o, plog_fn, &l, &p), -E2BIG);
    CHECK_EQ_INT(p, 99);
    const char *const one[] = {"true", NULL};
    o.argv = one;
    o.env = argv;
    CHECK_EQ_INT(ll_spawn(loop, &o, plog_fn, &l, &p), -E2BIG);
    CHECK_EQ_INT(p, 99);
    free(argv);
    check_still_runs(loop);
    ll_release(loop);
}

static void test_empty_cwd(void) {
    ll_loop loop = new_loop();
    static struct plog l;
    memset(&l, 0, sizeof l);
    const char *const argv[] = {"pwd", NULL};
    ll_process_options o = {.file = "pwd", .argv = argv, .cwd = "",
                            .stdio = {LL_STDIO_DEVNULL, LL_STDIO_PIPE, LL_STDIO_INHERIT}};
    ll_process p = 99;
    CHECK_EQ_INT(ll_spawn(loop, &o, plog_fn, &l, &p), -ENOENT);
    CHECK_EQ_INT(p, 99);
    ll_spawn_extra x = LL_SPAWN_EXTRA_INIT;
    CHECK_EQ_INT(ll_spawn_ex(loop, &o, &x, plog_fn, &l, &p), -ENOENT);
    CHECK_EQ_INT(p, 99);
    for (int i = 0; i < 3; i++)
        ll_loop_run_once(loop, LL_RUN_NOWAIT);
    CHECK_EQ_INT(l.exited, 0);
    check_still_runs(loop);
    ll_release(loop);
}

int main(void) {
    alarm(120); /* a hang is a failure, never a stuck suite */
    RUN_TEST(test_many_args);
    RUN_TEST(test_many_env);
    RUN_TEST(test_beyond_arg_max);
    RUN_TEST(test_past_any_execve);
    RUN_TEST(test_empty_cwd);
    return CHECK_REPORT();
}
