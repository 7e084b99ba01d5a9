/* SPDX-License-Identifier: MIT */
/*
 * bench/common.h — shared helpers for the benchmark programs (bench_uv.c,
 * bench_ev.c, bench_ll.c; workloads W1, W2, W3, W7 and libloop's task
 * workloads): clocks, getrusage, and the one-line result format that
 * bench/run.sh parses.
 *
 * Every program runs ONE workload per process (argv[1]) so that peak RSS
 * (ru_maxrss) belongs to that workload and implementation alone.
 *
 * Result line (stdout):
 *   RESULT impl=<name> workload=<W> n=<N> ns_per_cb=<x> wall_s=<x> cpu_s=<x>
 *          rss_mib=<x> base_rss_mib=<x> sched_s=<x> per_s=<x>
 * ns_per_cb = wall of the measured region / N (W7: per job; T-*: per task
 * step); per_s = N / wall (W7: jobs per second); cpu_s = user+sys of the whole
 * process (all threads, so a Go runtime's GC threads count) over the region;
 * rss_mib = the process's peak RSS at the end; base_rss_mib = peak RSS before
 * the region began (runtime + libraries); sched_s = wall time spent scheduling
 * from outside the loop before it ran (W2, W3, W3c, W7 submission, T-* task
 * creation; W6: the posting thread's time to post all N; 0 otherwise).
 */
#ifndef BENCH_COMMON_H
#define BENCH_COMMON_H

#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/resource.h>

#define BENCH_N 1000000
#define BENCH_N_W7 100000   /* W7: executor jobs */
#define BENCH_N_TASKS 10000 /* T-sleep / T-yield: tasks */
#define BENCH_N_W6 2000000 /* W6: cross-thread posts (2M: ~50 ms a run; 200k ran ~5 ms) */
#define BENCH_T_AWAITS 100  /* T-*: suspensions per task (so 101 steps each) */

typedef struct bench_mark {
    double wall;   /* CLOCK_MONOTONIC seconds */
    double cpu;    /* user+sys seconds, whole process */
    double user;   /* user seconds, whole process (cpu - user: in the kernel) */
    double maxrss; /* MiB */
} bench_mark;

static inline double bench_now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static inline bench_mark bench_mark_now(void) {
    struct rusage ru;
    bench_mark m;
    getrusage(RUSAGE_SELF, &ru);
    m.wall = bench_now();
    m.user = (double)ru.ru_utime.tv_sec + (double)ru.ru_utime.tv_usec / 1e6;
    m.cpu = m.user + (double)ru.ru_stime.tv_sec + (double)ru.ru_stime.tv_usec / 1e6;
    m.maxrss = (double)ru.ru_maxrss / 1024.0; /* ru_maxrss is KiB on Linux */
    return m;
}

/* Set (bench_now()) when scheduling from outside the loop ends, before the
 * loop runs; reported as sched_s (0 when not applicable). */
static double bench_sched_end;

static inline void bench_report(const char *impl, const char *workload, long n,
                                bench_mark start, bench_mark end) {
    double wall = end.wall - start.wall;
    double sched = bench_sched_end > 0 ? bench_sched_end - start.wall : 0;
    printf("RESULT impl=%s workload=%s n=%ld ns_per_cb=%.2f wall_s=%.4f cpu_s=%.4f "
           "rss_mib=%.1f base_rss_mib=%.1f sched_s=%.4f per_s=%.0f\n",
           impl, workload, n, wall * 1e9 / (double)n, wall, end.cpu - start.cpu,
           end.maxrss, start.maxrss, sched, (double)n / wall);
    fflush(stdout);
}

/* W6: a thread that posts N callbacks to a running loop as fast as it can,
 * through post(i); the loop's callbacks count and stop the loop at N. The
 * posting time is reported as sched_s (posted/s = N / sched_s). */
typedef struct bench_poster {
    long n;
    int (*post)(long i);
    double start, end;
    int failed;
} bench_poster;

static inline void *bench_poster_main(void *arg) {
    bench_poster *p = arg;
    p->start = bench_now();
    for (long i = 0; i < p->n; i++)
        if (p->post(i) != 0) {
            p->failed = 1;
            break;
        }
    p->end = bench_now();
    return NULL;
}

static inline void bench_check(int ok, const char *impl, const char *workload, const char *what) {
    if (!ok) {
        fprintf(stderr, "%s %s: check failed: %s\n", impl, workload, what);
        exit(2);
    }
}

/* N for workload w: argv[2] if given, else the workload's default (W7:
 * BENCH_N_W7 jobs; T-*: BENCH_N_TASKS tasks; otherwise BENCH_N). */
static inline long bench_n(int argc, char **argv) {
    /* Optional argv[2] overrides N (for profiling runs on a smaller N). */
    const char *w = argv[1];
    long def = strncmp(w, "W7", 2) == 0   ? BENCH_N_W7
               : strncmp(w, "T-", 2) == 0 ? BENCH_N_TASKS
               : strcmp(w, "W6") == 0     ? BENCH_N_W6
                                          : BENCH_N;
    long n = argc > 2 ? atol(argv[2]) : def;
    if (n < 2 || n % 2 != 0) {
        fprintf(stderr, "N must be an even number >= 2\n");
        exit(2);
    }
    return n;
}

static inline void bench_usage(const char *prog) {
    fprintf(stderr, "usage: %s W1|W1-fd|W2|W2-inloop|W3|W3c|W6|W7|W7-4|T-sleep|T-yield [N]\n"
                    "  (W7*: libuv and libloop only; T-*: libloop only)\n", prog);
    exit(2);
}

#endif
