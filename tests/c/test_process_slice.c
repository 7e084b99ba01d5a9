/* SPDX-License-Identifier: MIT */
/*
 * test_process_slice.c — the spawner asks for a short scheduler slice while
 * its vfork-style child runs (capi/spawn/slice.c); none of that may reach
 * the program it execs or stay on the host's thread. A child (this program
 * run as "report") prints the policy, nice and slice it started with; each
 * must be the spawning thread's, and the thread's must be what it was
 * before, for the default slice, a slice the host chose, SCHED_BATCH and a
 * raised nice, after a spawn that fails, and through the clone() fallback.
 */
#define _GNU_SOURCE
#include <sched.h>
#include <sys/resource.h>
#include <sys/syscall.h>

#include "no_clone3.h"
#include "proc_helpers.h"

#ifndef SYS_sched_setattr
#define SYS_sched_setattr 314
#endif
#ifndef SYS_sched_getattr
#define SYS_sched_getattr 315
#endif

struct sattr {
    uint32_t size, policy;
    uint64_t flags;
    int32_t nice;
    uint32_t priority;
    uint64_t runtime, deadline, period;
};

static struct sattr get_attr(void) {
    struct sattr a;
    memset(&a, 0, sizeof a);
    if (syscall(SYS_sched_getattr, 0, &a, sizeof a, 0) != 0)
        a.policy = 99;
    return a;
}

static int set_attr_flags(uint32_t policy, int nice, uint64_t runtime, uint64_t flags) {
    struct sattr a;
    memset(&a, 0, sizeof a);
    a.size = sizeof a;
    a.flags = flags;
    a.policy = policy;
    a.nice = nice;
    a.runtime = runtime;
    return (int)syscall(SYS_sched_setattr, 0, &a, 0);
}

static int set_attr(uint32_t policy, int nice, uint64_t runtime) { return set_attr_flags(policy, nice, runtime, 0); }

#define RESET_ON_FORK 0x01

static const char *self_exe;

/* Spawns "self report" and returns what it printed: "policy nice slice
 * reset-on-fork". */
static void child_report(ll_loop loop, char *out, size_t size) {
    const char *argv[] = {self_exe, "report", NULL};
    struct plog l;
    memset(&l, 0, sizeof l);
    CHECK(run_child(loop, argv, LL_STDIO_DEVNULL, LL_STDIO_PIPE, LL_STDIO_DEVNULL, &l));
    CHECK_EQ_INT(l.code, 0);
    snprintf(out, size, "%.100s", l.out[1]);
}

static void expect_same(ll_loop loop, const char *what) {
    struct sattr before = get_attr();
    char want[128], got[128];
    snprintf(want, sizeof want, "%u %d %llu 0\n", before.policy, before.nice, (unsigned long long)before.runtime);
    for (int i = 0; i < 3; i++) {
        child_report(loop, got, sizeof got);
        if (strcmp(got, want) != 0)
            CHECK_FAIL_AT(__FILE__, __LINE__, "%s: the child started with \"%s\", the host has \"%s\"", what, got, want);
        struct sattr after = get_attr();
        CHECK_EQ_INT(after.policy, before.policy);
        CHECK_EQ_INT(after.nice, before.nice);
        CHECK_EQ_INT(after.runtime, before.runtime);
    }
}

static void test_default_slice_reaches_child_and_stays(void) {
    ll_loop loop = new_loop();
    expect_same(loop, "default");
    ll_release(loop);
}

static void test_host_slice_reaches_child_and_stays(void) {
    if (get_attr().runtime == 0) {
        /* A kernel before custom slices (6.12) reports none: nothing of
         * the spawner's can show, the other cases still run. */
        fprintf(stderr, "note: no custom scheduler slices on this kernel\n");
        return;
    }
    CHECK_EQ_INT(set_attr(SCHED_OTHER, 0, 3000000), 0);
    CHECK_EQ_INT(get_attr().runtime, 3000000);
    ll_loop loop = new_loop();
    expect_same(loop, "a 3 ms slice");
    ll_release(loop);
    CHECK_EQ_INT(set_attr(SCHED_OTHER, 0, 0), 0);
}

static void test_failed_spawn_restores(void) {
    ll_loop loop = new_loop();
    struct sattr before = get_attr();
    const char *argv[] = {"/nonexistent/program", NULL};
    struct plog l;
    memset(&l, 0, sizeof l);
    ll_process p = 0;
    CHECK_EQ_INT(spawn3(loop, argv, LL_STDIO_DEVNULL, LL_STDIO_DEVNULL, LL_STDIO_DEVNULL, &l, &p), -ENOENT);
    struct sattr after = get_attr();
    CHECK_EQ_INT(after.runtime, before.runtime);
    CHECK_EQ_INT(after.policy, before.policy);
    check_still_runs(loop);
    ll_release(loop);
}

/* A host thread that resets its children's scheduling on fork: the
 * child gets what such a fork gives (the flag cleared, the slice the
 * kernel gives a reset child), the thread keeps its flag. */
static void test_reset_on_fork_is_kept(void) {
    int nice = getpriority(PRIO_PROCESS, 0);
    CHECK_EQ_INT(set_attr_flags(SCHED_OTHER, nice, 0, RESET_ON_FORK), 0);
    struct sattr before = get_attr();
    CHECK_EQ_INT(before.flags & RESET_ON_FORK, RESET_ON_FORK);
    ll_loop loop = new_loop();
    char got[128], want[128];
    child_report(loop, got, sizeof got);
    snprintf(want, sizeof want, "%u %d %llu 0\n", before.policy, nice > 0 ? nice : 0,
             (unsigned long long)before.runtime);
    CHECK_EQ_STR(got, want);
    struct sattr after = get_attr();
    CHECK_EQ_INT(after.flags & RESET_ON_FORK, RESET_ON_FORK);
    CHECK_EQ_INT(after.runtime, before.runtime);
    ll_release(loop);
    CHECK_EQ_INT(set_attr(SCHED_OTHER, nice, 0), 0);
}

/* The clone() fallback (clone3 refused) gives the same: after the tests
 * above, since the filter stays. */
static void test_fallback_clone_restores_too(void) {
    CHECK_EQ_INT(refuse_clone3(), 0);
    ll_loop loop = new_loop();
    expect_same(loop, "clone() fallback");
    ll_release(loop);
    test_failed_spawn_restores();
}

/* Last: an unprivileged process cannot lower its nice again. */
static void test_batch_and_nice_reach_child_and_stays(void) {
    CHECK_EQ_INT(set_attr(SCHED_BATCH, getpriority(PRIO_PROCESS, 0) + 2, 0), 0);
    CHECK_EQ_INT(get_attr().policy, SCHED_BATCH);
    ll_loop loop = new_loop();
    expect_same(loop, "SCHED_BATCH, nice + 2");
    ll_release(loop);
}

int main(int argc, char **argv) {
    if (argc == 2 && strcmp(argv[1], "report") == 0) {
        struct sattr a = get_attr();
        printf("%u %d %llu %llu\n", a.policy, a.nice, (unsigned long long)a.runtime,
               (unsigned long long)(a.flags & RESET_ON_FORK));
        return 0;
    }
    alarm(60);
    /* argv[0], not /proc/self/exe: under valgrind that is valgrind's. */
    static char path[4096];
    if (realpath(argv[0], path) == NULL) {
        perror("realpath");
        return 1;
    }
    self_exe = path;
    RUN_TEST(test_default_slice_reaches_child_and_stays);
    RUN_TEST(test_host_slice_reaches_child_and_stays);
    RUN_TEST(test_failed_spawn_restores);
    RUN_TEST(test_reset_on_fork_is_kept);
    RUN_TEST(test_fallback_clone_restores_too);
    RUN_TEST(test_batch_and_nice_reach_child_and_stays);
    return CHECK_REPORT();
}
