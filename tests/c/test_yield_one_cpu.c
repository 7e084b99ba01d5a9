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
 * library loads (and its runtime sizes itself) under a one-CPU mask: once
 * with the library's own choice of Ps, once with GOMAXPROCS=1 (one P, what
 * the runtime picks by itself for one CPU), and compares the voluntary
 * context switches of the two, measured side by side so that other load
 * on the machine (which adds involuntary ones to both) does not decide. */
#define _GNU_SOURCE
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "libloop.h"
#include "check.h"

#define RUNS 1500          /* host-queue runs of SPIN_NS each: ~0.3 s */
#define SPIN_NS 200000
/* With one P the loop thread hands its P off at every long callback and
 * the monitor thread wakes: measured 871-1,279 voluntary switches of the
 * process over the RUNS (1,757-2,617 in all) against 238-348 (324-584)
 * with two Ps, on a loaded 2-CPU machine. The check: at most half. */
#define MAX_RATIO 0.5

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

static long voluntary_switches(void) {
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    return ru.ru_nvcsw;
}

/* The child's part: RUNS long host batches; prints the voluntary context
 * switches of the process over them. */
static int measure(void) {
    cpu_set_t set;
    if (sched_getaffinity(0, sizeof set, &set) != 0 || CPU_COUNT(&set) != 1)
        return 2;
    ll_loop loop = 0;
    if (ll_loop_new(&loop) != 0 || ll_loop_set_host_queue(loop, long_batch, NULL) != 0 ||
        ll_loop_host_ready(loop) != 0)
        return 2;
    long before = voluntary_switches();
    if (ll_loop_run_forever(loop) != 0 || runs != RUNS)
        return 2;
    printf("%ld\n", voluntary_switches() - before);
    ll_loop_close(loop);
    ll_release(loop);
    return 0;
}

/* Runs this program as a one-CPU child, GOMAXPROCS set to gomaxprocs (or
 * unset for NULL); its count, or -1. */
static long child_switches(const char *self, const char *gomaxprocs) {
    int fds[2];
    if (pipe(fds) != 0)
        return -1;
    pid_t pid = fork();
    if (pid == 0) {   /* straight to exec: nothing of the library runs here */
        dup2(fds[1], 1);
        close(fds[0]);
        if (gomaxprocs != NULL)
            setenv("GOMAXPROCS", gomaxprocs, 1);
        else
            unsetenv("GOMAXPROCS");
        setenv("LL_TEST_ONE_CPU", "1", 1);
        execl(self, self, (char *)NULL);
        _exit(127);
    }
    close(fds[1]);
    char buf[64] = {0};
    ssize_t n = read(fds[0], buf, sizeof buf - 1);
    close(fds[0]);
    int status = 0;
    waitpid(pid, &status, 0);
    if (pid < 0 || n <= 0 || !WIFEXITED(status) || WEXITSTATUS(status) != 0)
        return -1;
    return strtol(buf, NULL, 10);
}

static void test_long_host_batches_on_one_cpu(void) {
    char self[4096];
    ssize_t len = readlink("/proc/self/exe", self, sizeof self - 1);
    CHECK(len > 0);
    self[len > 0 ? len : 0] = 0;
    long ours = child_switches(self, NULL);
    long one_p = child_switches(self, "1");
    fprintf(stderr, "voluntary context switches over %d batches: %ld (the library's Ps), "
            "%ld (GOMAXPROCS=1)\n", RUNS, ours, one_p);
    CHECK(ours >= 0 && one_p > 0);
    CHECK(ours <= MAX_RATIO * one_p);
}

int main(int argc, char **argv) {
    (void)argc;
    (void)argv;
    if (getenv("LL_TEST_ONE_CPU") != NULL)
        return measure();
    cpu_set_t set;
    CPU_ZERO(&set);
    int cpu = sched_getcpu();
    CPU_SET(cpu < 0 ? 0 : cpu, &set);
    if (sched_setaffinity(0, sizeof set, &set) != 0) {   /* the children inherit it */
        perror("test_yield_one_cpu: sched_setaffinity");
        return 1;
    }
    RUN_TEST(test_long_host_batches_on_one_cpu);
    return CHECK_REPORT();
}
