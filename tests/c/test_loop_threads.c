/* SPDX-License-Identifier: MIT */
/* The threads an embedder gets (docs/FOOTPRINT.md): loading libloop starts
 * only the Go runtime's own (its init thread, sysmon, the template thread
 * and the idle threads its scheduler keeps: one per GOMAXPROCS slot, and
 * now and then one more, as an empty Go library gets), and running, stopping
 * and closing loops on the host's thread starts none. */
#define _GNU_SOURCE
#include <dirent.h>
#include <sched.h>
#include <stdlib.h>
#include <time.h>

#include "libloop.h"
#include "check.h"

static int thread_count(void) {
    DIR *d = opendir("/proc/self/task");
    if (d == NULL)
        return -1;
    int n = 0;
    struct dirent *e;
    while ((e = readdir(d)) != NULL)
        if (e->d_name[0] != '.')
            n++;
    closedir(d);
    return n;
}

static void sleep_ms(long ms) {
    struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
    nanosleep(&ts, NULL);
}

/* The thread count once it has held for 200 ms (the runtime finishes
 * starting on its own thread after the library's constructor returns), or
 * after 3 s. */
static int settled_threads(void) {
    int n = thread_count(), same = 0;
    for (int i = 0; i < 150 && same < 10; i++) {
        sleep_ms(20);
        int m = thread_count();
        same = m == n ? same + 1 : 0;
        n = m;
    }
    return n;
}

/* GOMAXPROCS as the runtime chooses it: the environment's, else the CPUs
 * this process may use, raised to the library's floor of 2 (capi/procs.go). */
static int go_procs(void) {
    const char *env = getenv("GOMAXPROCS");
    if (env != NULL && atoi(env) > 0)
        return atoi(env);
    cpu_set_t set;
    int n = sched_getaffinity(0, sizeof set, &set) == 0 ? CPU_COUNT(&set) : 1;
    return n < 2 ? 2 : n;
}

static void stop_cb(ll_loop loop, void *arg) {
    ++*(int *)arg;
    ll_loop_stop(loop);
}

static void count_cb(ll_loop loop, void *arg) {
    (void)loop;
    ++*(int *)arg;
}

/* One loop's life on this thread: callbacks, a timer, run, close. */
static void one_loop(void) {
    ll_loop loop = 0;
    int soon = 0, fired = 0;
    CHECK_EQ_INT(ll_loop_new(&loop), 0);
    for (int i = 0; i < 100; i++)
        CHECK_EQ_INT(ll_call_soon(loop, count_cb, &soon, NULL), 0);
    CHECK_EQ_INT(ll_call_later(loop, 0.001, stop_cb, &fired, NULL), 0);
    CHECK_EQ_INT(ll_loop_run_forever(loop), 0);
    CHECK_EQ_INT(soon, 100);
    CHECK_EQ_INT(fired, 1);
    CHECK_EQ_INT(ll_loop_run_once(loop, LL_RUN_NOWAIT), 0);
    CHECK_EQ_INT(ll_loop_close(loop), 0);
    CHECK_EQ_INT(ll_release(loop), 0);
}

static int loaded;

static void test_load_starts_only_the_runtime(void) {
    /* this thread, plus the runtime's init thread, sysmon, the template
     * thread and its idle threads: an empty Go c-shared library has 4 +
     * GOMAXPROCS, in about one start in five 5 + GOMAXPROCS */
    int limit = 1 + 3 + go_procs() + 1;
    if (loaded > limit)
        fprintf(stderr, "%d threads after load, the Go runtime's own are at most %d\n", loaded, limit);
    CHECK(loaded > 1);
    CHECK(loaded <= limit);
}

static void test_loops_start_no_thread(void) {
    one_loop();
    int after_one = settled_threads();
    for (int i = 0; i < 20; i++)
        one_loop();
    int after_many = settled_threads();
    if (after_one > loaded || after_many > loaded)
        fprintf(stderr, "threads: %d after load, %d after one loop, %d after 21\n", loaded, after_one,
                after_many);
    CHECK(after_one <= loaded);
    CHECK(after_many <= loaded);
}

int main(void) {
    ll_version(); /* the first call waits for the runtime's start */
    loaded = settled_threads();
    RUN_TEST(test_load_starts_only_the_runtime);
    RUN_TEST(test_loops_start_no_thread);
    return CHECK_REPORT();
}
