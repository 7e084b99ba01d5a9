/* SPDX-License-Identifier: MIT */
/*
 * footprint.c — what embedding an event loop library costs a C host before
 * it does any work: threads and resident memory right after the library is
 * loaded, and after one loop has run one timer. Driven by
 * bench/run_footprint.sh (which adds the library sizes and the 10,000 idle
 * connections, measured on the bench/net_* servers).
 *
 *   footprint IMPL LIBRARY
 *       IMPL: libuv | libev | libloop; LIBRARY: the shared object to
 *       dlopen (the program links none of them, so "start" is the bare host).
 *
 * Phases, one result line each (stdout):
 *   start  the host before dlopen (libc and libdl only)
 *   load   after dlopen(LIBRARY, RTLD_NOW) and the thread count has held
 *          for 200 ms (libloop: the Go runtime starts in the library's
 *          constructor and finishes on a thread of its own)
 *   loop   after a loop was made and ran until a 1 ms timer fired (libuv:
 *          uv_loop_init + uv_timer_start + uv_run; libev: ev_loop_new +
 *          ev_timer_start + ev_run; libloop: ll_loop_new + ll_call_later +
 *          ll_loop_run_forever), the loop still open, once the thread count
 *          has held for 200 ms
 *   closed after the loop was closed, likewise
 *
 *   RESULT impl=<IMPL> phase=<phase> threads=<n> rss_kib=<VmRSS>
 *          vsz_kib=<VmSize>
 * threads = entries of /proc/self/task; rss/vsz = /proc/self/status.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static const char *impl;

static void die(const char *what) {
    fprintf(stderr, "footprint %s: %s\n", impl, what);
    exit(2);
}

static int thread_count(void) {
    DIR *d = opendir("/proc/self/task");
    if (d == NULL)
        die("cannot open /proc/self/task");
    int n = 0;
    struct dirent *e;
    while ((e = readdir(d)) != NULL)
        if (e->d_name[0] != '.')
            n++;
    closedir(d);
    return n;
}

static long status_kib(const char *field) {
    FILE *f = fopen("/proc/self/status", "r");
    if (f == NULL)
        die("cannot open /proc/self/status");
    char line[256];
    size_t len = strlen(field);
    long v = -1;
    while (fgets(line, sizeof line, f) != NULL)
        if (strncmp(line, field, len) == 0 && line[len] == ':') {
            v = atol(line + len + 1);
            break;
        }
    fclose(f);
    return v;
}

static void report(const char *phase) {
    printf("RESULT impl=%s phase=%s threads=%d rss_kib=%ld vsz_kib=%ld\n", impl, phase,
           thread_count(), status_kib("VmRSS"), status_kib("VmSize"));
    fflush(stdout);
}

/* Wait until the thread count has held for 200 ms (at most 3 s): the Go
 * runtime goes on starting on its own thread after dlopen returns (a count
 * taken at once sees 2 threads), and a loop's background threads, if any,
 * start after the run. */
static void settle(void) {
    struct timespec ts = {0, 20 * 1000 * 1000};
    int n = thread_count(), same = 0;
    for (int i = 0; i < 150 && same < 10; i++) {
        nanosleep(&ts, NULL);
        int m = thread_count();
        same = m == n ? same + 1 : 0;
        n = m;
    }
}

static void *sym(void *lib, const char *name) {
    void *p = dlsym(lib, name);
    if (p == NULL) {
        fprintf(stderr, "footprint %s: %s not found: %s\n", impl, name, dlerror());
        exit(2);
    }
    return p;
}

static int fired;

/* ---- libuv: the calls through dlsym; sizes from uv_loop_size and
 * uv_handle_size, so no libuv header is needed. */

typedef void (*uv_timer_fn)(void *timer);

static void uv_fire(void *timer) {
    (void)timer;
    fired = 1;
}

static void run_libuv(void *lib) {
    size_t (*loop_size)(void) = (size_t (*)(void))sym(lib, "uv_loop_size");
    size_t (*handle_size)(int) = (size_t (*)(int))sym(lib, "uv_handle_size");
    int (*loop_init)(void *) = (int (*)(void *))sym(lib, "uv_loop_init");
    int (*timer_init)(void *, void *) = (int (*)(void *, void *))sym(lib, "uv_timer_init");
    int (*timer_start)(void *, uv_timer_fn, uint64_t, uint64_t) =
        (int (*)(void *, uv_timer_fn, uint64_t, uint64_t))sym(lib, "uv_timer_start");
    int (*run)(void *, int) = (int (*)(void *, int))sym(lib, "uv_run");
    void (*close)(void *, void *) = (void (*)(void *, void *))sym(lib, "uv_close");
    int (*loop_close)(void *) = (int (*)(void *))sym(lib, "uv_loop_close");
    const int UV_TIMER = 13; /* uv_handle_type's UV_TIMER (uv.h, stable since 1.0) */

    void *loop = calloc(1, loop_size());
    void *timer = calloc(1, handle_size(UV_TIMER));
    if (loop == NULL || timer == NULL || loop_init(loop) != 0 || timer_init(loop, timer) != 0 ||
        timer_start(timer, uv_fire, 1, 0) != 0)
        die("uv setup failed");
    run(loop, 0 /* UV_RUN_DEFAULT */);
    if (!fired)
        die("the timer did not fire");
    settle();
    report("loop");
    close(timer, NULL);
    run(loop, 0);
    if (loop_close(loop) != 0)
        die("uv_loop_close failed");
    settle();
    report("closed");
}

/* ---- libev: ev_timer's layout is libev's ABI (ev.h with its default
 * EV_COMMON and EV_MULTIPLICITY, as Debian builds it); declared here so that
 * the file needs no libev header either. */

struct ev_timer_abi {
    int active, pending, priority;
    void *data;
    void (*cb)(void *loop, struct ev_timer_abi *w, int revents);
    double at, repeat;
};

static void ev_fire(void *loop, struct ev_timer_abi *w, int revents) {
    (void)loop;
    (void)w;
    (void)revents;
    fired = 1;
}

static void run_libev(void *lib) {
    void *(*loop_new)(unsigned) = (void *(*)(unsigned))sym(lib, "ev_loop_new");
    void (*timer_start)(void *, struct ev_timer_abi *) =
        (void (*)(void *, struct ev_timer_abi *))sym(lib, "ev_timer_start");
    int (*run)(void *, int) = (int (*)(void *, int))sym(lib, "ev_run");
    void (*destroy)(void *) = (void (*)(void *))sym(lib, "ev_loop_destroy");

    void *loop = loop_new(0 /* EVFLAG_AUTO */);
    if (loop == NULL)
        die("ev_loop_new failed");
    struct ev_timer_abi t = {0};
    t.cb = ev_fire;
    t.at = 0.001;
    timer_start(loop, &t);
    run(loop, 0);
    if (!fired)
        die("the timer did not fire");
    settle();
    report("loop");
    destroy(loop);
    settle();
    report("closed");
}

/* ---- libloop ---- */

typedef uint64_t ll_loop;
typedef void (*ll_callback)(ll_loop loop, void *arg);
static int (*ll_stop)(ll_loop);

static void ll_fire(ll_loop loop, void *arg) {
    (void)arg;
    fired = 1;
    ll_stop(loop);
}

static void run_libloop(void *lib) {
    int (*loop_new)(ll_loop *) = (int (*)(ll_loop *))sym(lib, "ll_loop_new");
    int (*call_later)(ll_loop, double, ll_callback, void *, uint64_t *) =
        (int (*)(ll_loop, double, ll_callback, void *, uint64_t *))sym(lib, "ll_call_later");
    int (*run)(ll_loop) = (int (*)(ll_loop))sym(lib, "ll_loop_run_forever");
    int (*loop_close)(ll_loop) = (int (*)(ll_loop))sym(lib, "ll_loop_close");
    int (*release)(uint64_t) = (int (*)(uint64_t))sym(lib, "ll_release");
    ll_stop = (int (*)(ll_loop))sym(lib, "ll_loop_stop");

    ll_loop loop;
    if (loop_new(&loop) != 0 || call_later(loop, 0.001, ll_fire, NULL, NULL) != 0 || run(loop) != 0)
        die("ll setup or run failed");
    if (!fired)
        die("the timer did not fire");
    settle();
    report("loop");
    if (loop_close(loop) != 0 || release(loop) != 0)
        die("ll_loop_close failed");
    settle();
    report("closed");
}

int main(int argc, char **argv) {
    if (argc != 3) {
        fprintf(stderr, "usage: footprint libuv|libev|libloop LIBRARY\n");
        return 2;
    }
    impl = argv[1];
    void (*run)(void *);
    if (strcmp(impl, "libuv") == 0)
        run = run_libuv;
    else if (strcmp(impl, "libev") == 0)
        run = run_libev;
    else if (strcmp(impl, "libloop") == 0)
        run = run_libloop;
    else
        die("unknown implementation (libuv, libev, libloop)");
    report("start");
    void *lib = dlopen(argv[2], RTLD_NOW | RTLD_LOCAL);
    if (lib == NULL) {
        fprintf(stderr, "footprint %s: dlopen %s: %s\n", impl, argv[2], dlerror());
        return 2;
    }
    settle();
    report("load");
    run(lib);
    return 0;
}
