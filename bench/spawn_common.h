/* SPDX-License-Identifier: MIT */
/*
 * bench/spawn_common.h — shared helpers of the subprocess benchmark W8
 * (spawn_uv.c, spawn_ev.c, spawn_ll.c; run by bench/run_spawn.sh): argument
 * parsing, the parent-RSS ballast, the pool bookkeeping (at most PAR
 * children running), the watchdog and the result line.
 *
 * Modes of every spawn_<impl> program:
 *   spawn_<impl> W8 [N [PAR]]      N x /bin/true (default 500), at most PAR
 *                                  (default 16) running at a time; prints one
 *                                  RESULT line
 *   spawn_<impl> W8-1g [N [PAR]]   the same after allocating and touching
 *                                  (memset) a ballast of 1 GiB in the parent
 *                                  (BENCH_W8_BIG_MIB MiB when set), so every
 *                                  spawn happens in a process with a large
 *                                  RSS: fork() copies its page tables,
 *                                  vfork/CLONE_VM does not
 *   spawn_<impl> version
 *
 * Every child: /bin/true by absolute path (no PATH search), argv {"true"},
 * the parent's environment, stdin/stdout/stderr on /dev/null. Every exit is
 * checked (status 0, or the program exits 2).
 *
 * Result line (stdout), parsed by bench/run_spawn.sh / bench/report.py:
 *   RESULT impl=<name> workload=W8|W8-1g n=<N> par=<PAR> per_s=<spawns/s>
 *          us_per_spawn=<x> wall_s=<x> cpu_s=<x> child_cpu_s=<x>
 *          rss_mib=<x> ballast_mib=<x> max_running=<x>
 * The measured region starts just before the first spawn and ends when the
 * Nth exit has been handled by the loop (the ballast is allocated before
 * it). per_s = N / wall; cpu_s = user+sys of the parent (all its threads)
 * over the region, child_cpu_s = user+sys of the reaped children (the
 * kernel charges the copy of the page tables in fork() to the parent, the
 * exec to the child); rss_mib = the parent's peak RSS; max_running = the
 * most children running at once (spawned, exit not yet handled).
 */
#ifndef BENCH_SPAWN_COMMON_H
#define BENCH_SPAWN_COMMON_H

#include "common.h"
#include <errno.h>
#include <signal.h>
#include <unistd.h>

#define W8_N 500
#define W8_PAR 16
#define W8_BIG_MIB 1024
#define W8_TIMEOUT_S 300 /* watchdog of one run (alarm): fork() at 1 GiB on a busy machine is slow */
#define W8_PROGRAM "/bin/true"

static long w8_n, w8_par;   /* spawns in all, most running at once */
static long w8_started;     /* spawned so far */
static long w8_exited;      /* exits handled so far */
static long w8_max_running; /* the most running at once */
static const char *w8_workload;
static size_t w8_ballast_mib;
static char *w8_ballast;
static const char *w8_impl;
static bench_mark w8_end; /* taken when the Nth exit is handled */

static void w8_alarm(int sig) {
    (void)sig;
    static const char msg[] = "spawn benchmark: watchdog: not finished in time\n";
    ssize_t r = write(2, msg, sizeof msg - 1);
    (void)r;
    _exit(3);
}

static inline void w8_usage(const char *prog) {
    fprintf(stderr, "usage: %s W8|W8-1g [N [PAR]] | version\n", prog);
    exit(2);
}

/* Parses argv, installs the watchdog and allocates the ballast (W8-1g). */
static inline void w8_setup(const char *impl, int argc, char **argv) {
    w8_impl = impl;
    if (argc < 2)
        w8_usage(argv[0]);
    w8_workload = argv[1];
    if (strcmp(w8_workload, "W8") == 0) {
        w8_ballast_mib = 0;
    } else if (strcmp(w8_workload, "W8-1g") == 0) {
        const char *e = getenv("BENCH_W8_BIG_MIB");
        w8_ballast_mib = e && *e ? (size_t)atol(e) : W8_BIG_MIB;
    } else {
        w8_usage(argv[0]);
    }
    w8_n = argc > 2 ? atol(argv[2]) : W8_N;
    w8_par = argc > 3 ? atol(argv[3]) : W8_PAR;
    if (w8_n < 1 || w8_par < 1) {
        fprintf(stderr, "N and PAR must be >= 1\n");
        exit(2);
    }
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = w8_alarm;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGALRM, &sa, NULL);
    alarm(W8_TIMEOUT_S);
    if (w8_ballast_mib > 0) {
        size_t size = w8_ballast_mib << 20;
        w8_ballast = malloc(size);
        if (w8_ballast == NULL) {
            fprintf(stderr, "%s: cannot allocate %zu MiB\n", impl, w8_ballast_mib);
            exit(2);
        }
        memset(w8_ballast, 0x5a, size); /* every page resident and private */
    }
}

/* Bookkeeping: call after each successful spawn / each handled exit (with
 * its status; anything but a clean exit 0 fails the run). w8_exit returns 1
 * when the next child should be started, and w8_done() says all exited. */
static inline void w8_spawned(void) {
    w8_started++;
    long running = w8_started - w8_exited;
    if (running > w8_max_running)
        w8_max_running = running;
}

static inline int w8_exit(long status) {
    if (status != 0) {
        fprintf(stderr, "%s %s: child %ld exited with %ld\n", w8_impl, w8_workload, w8_exited, status);
        exit(2);
    }
    w8_exited++;
    if (w8_exited == w8_n)
        w8_end = bench_mark_now();
    return w8_started < w8_n;
}

static inline int w8_done(void) { return w8_exited == w8_n; }

static inline double w8_child_cpu(void) {
    struct rusage ru;
    getrusage(RUSAGE_CHILDREN, &ru);
    return (double)ru.ru_utime.tv_sec + (double)ru.ru_utime.tv_usec / 1e6 +
           (double)ru.ru_stime.tv_sec + (double)ru.ru_stime.tv_usec / 1e6;
}

static double w8_child_cpu0;

static inline bench_mark w8_begin(void) {
    w8_child_cpu0 = w8_child_cpu();
    return bench_mark_now();
}

/* Reports the region from start to the Nth exit (w8_end). */
static inline void w8_report(bench_mark start) {
    bench_mark end = w8_end;
    double wall = end.wall - start.wall;
    bench_check(w8_done() && w8_started == w8_n, w8_impl, w8_workload, "every child spawned and exited once");
    bench_check(w8_max_running <= w8_par, w8_impl, w8_workload, "at most PAR running");
    if (w8_ballast != NULL) { /* the ballast is still there, untouched */
        size_t size = w8_ballast_mib << 20;
        bench_check(w8_ballast[0] == 0x5a && w8_ballast[size / 2] == 0x5a && w8_ballast[size - 1] == 0x5a,
                    w8_impl, w8_workload, "ballast intact");
    }
    printf("RESULT impl=%s workload=%s n=%ld par=%ld per_s=%.0f us_per_spawn=%.1f wall_s=%.4f "
           "cpu_s=%.4f child_cpu_s=%.4f rss_mib=%.1f ballast_mib=%zu max_running=%ld\n",
           w8_impl, w8_workload, w8_n, w8_par, (double)w8_n / wall, wall * 1e6 / (double)w8_n, wall,
           end.cpu - start.cpu, w8_child_cpu() - w8_child_cpu0, end.maxrss, w8_ballast_mib, w8_max_running);
    fflush(stdout);
}

#endif
