/* SPDX-License-Identifier: MIT */
/* A process limited to one CPU (taskset, a one-CPU container) runs a
 * host's long callbacks without the loop's thread losing its place in the
 * library's Go scheduler. To that scheduler a call out to C (a host-queue
 * run, a C callback) is a system call, and its monitor thread takes the
 * scheduler slot (a P) from a thread that stays in one for more than
 * ~20 us unless another P is idle; with one P per CPU and one CPU there
 * never is one, so every such callback would end in a hand-off between
 * threads and wake the monitor. What a host relies on: the time of its
 * callbacks is spent running them, not in thread switches.
 *
 * The test re-executes itself bound to the CPU it started on, so that the
 * library loads (and its runtime sizes itself) under a one-CPU mask. */
#define _GNU_SOURCE
#include <sched.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include "libloop.h"
#include "check.h"

#define RUNS 1500          /* host-queue runs of SPIN_NS each: ~0.3 s */
#define SPIN_NS 200000
#define MAX_SWITCHES 1000  /* the whole process's over the RUNS. Measured:
                              ~300 with two Ps (the loop's yield every 5 ms
                              is a hand-off of its own), 2,500-2,850 with
                              one */

static int runs;

static long long now_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

/* A host batch that takes SPIN_NS of CPU, RUNS times in a row. */
static int long_batch(ll_loop loop, void *arg) {
    (void)arg;
    long long end = now_ns() + SPIN_NS;
    while (now_ns() < end)
        ;
    if (++runs == RUNS) {
        ll_loop_stop(loop);
        return 0;
    }
    return 1;
}

static long switches(void) {
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    return ru.ru_nvcsw + ru.ru_nivcsw;
}

static void test_long_host_batches_on_one_cpu(void) {
    cpu_set_t set;
    CHECK_EQ_INT(sched_getaffinity(0, sizeof set, &set), 0);
    CHECK_EQ_INT(CPU_COUNT(&set), 1);
    ll_loop loop = 0;
    CHECK_EQ_INT(ll_loop_new(&loop), 0);
    CHECK_EQ_INT(ll_loop_set_host_queue(loop, long_batch, NULL), 0);
    CHECK_EQ_INT(ll_loop_host_ready(loop), 0);
    long before = switches();
    long long t0 = now_ns();
    CHECK_EQ_INT(ll_loop_run_forever(loop), 0);
    long long took = now_ns() - t0;
    long n = switches() - before;
    CHECK_EQ_INT(runs, RUNS);
    if (n > MAX_SWITCHES)
        fprintf(stderr, "%ld context switches in %d batches (%.0f ms)\n", n, RUNS, took / 1e6);
    CHECK(n <= MAX_SWITCHES);
    CHECK_EQ_INT(ll_loop_close(loop), 0);
    ll_release(loop);
}

int main(int argc, char **argv) {
    (void)argc;
    if (getenv("LL_TEST_ONE_CPU") == NULL) {
        cpu_set_t set;
        CPU_ZERO(&set);
        int cpu = sched_getcpu();
        CPU_SET(cpu < 0 ? 0 : cpu, &set);
        if (sched_setaffinity(0, sizeof set, &set) != 0 ||
            setenv("LL_TEST_ONE_CPU", "1", 1) != 0 ||
            unsetenv("GOMAXPROCS") != 0) {   /* the library's own choice */
            perror("test_one_cpu: setup");
            return 1;
        }
        execv("/proc/self/exe", argv);
        perror("test_one_cpu: execv");
        return 1;
    }
    RUN_TEST(test_long_host_batches_on_one_cpu);
    return CHECK_REPORT();
}
