/* SPDX-License-Identifier: MIT */
/*
 * spawn_uv.c — the libuv rival for the subprocess workload W8 (and W8-1g):
 * N x /bin/true, at most PAR running. Modes and the result line: see
 * bench/spawn_common.h.
 *
 * Each child: uv_spawn(loop, &proc[i], &opts) on its own uv_process_t (one
 * malloc'd array of N, so a handle is never reused while closing), file
 * "/bin/true", args {"true", NULL}, env NULL (inherited), stdio_count 3,
 * every one UV_IGNORE (libuv opens /dev/null for fds 0-2 in the child).
 * libuv 1.44 starts the child with fork() (the parent's page tables are
 * copied) and execvp, reports an exec failure through a CLOEXEC pipe, and
 * learns of exits through its SIGCHLD handler (a signal pipe into the loop,
 * then waitpid on each of its process handles). exit_cb checks the status,
 * uv_close()s the handle and spawns the next child right there; uv_run
 * returns when the last handle is closed.
 */
#include "spawn_common.h"
#include <uv.h>

static const char *IMPL = "libuv";
static uv_loop_t *loop;
static uv_process_t *procs;
static uv_process_options_t opts;
static uv_stdio_container_t stdio[3];
static char *child_argv[] = {"true", NULL};

static void die_uv(const char *what, int rc) {
    fprintf(stderr, "%s: %s failed: %s\n", IMPL, what, uv_strerror(rc));
    exit(2);
}

static void on_exit_cb(uv_process_t *p, int64_t status, int term_signal);

static void spawn_one(void) {
    int rc = uv_spawn(loop, &procs[w8_started], &opts);
    if (rc != 0)
        die_uv("uv_spawn", rc);
    w8_spawned();
}

static void on_exit_cb(uv_process_t *p, int64_t status, int term_signal) {
    int more = w8_exit(term_signal ? -term_signal : (long)status);
    uv_close((uv_handle_t *)p, NULL);
    if (more)
        spawn_one();
}

int main(int argc, char **argv) {
    if (argc >= 2 && strcmp(argv[1], "version") == 0) {
        printf("%s\n", uv_version_string());
        return 0;
    }
    w8_setup(IMPL, argc, argv);
    loop = uv_default_loop();
    procs = calloc((size_t)w8_n, sizeof *procs);
    if (procs == NULL)
        die_uv("calloc", UV_ENOMEM);
    for (int i = 0; i < 3; i++)
        stdio[i].flags = UV_IGNORE;
    opts.file = W8_PROGRAM;
    opts.args = child_argv;
    opts.exit_cb = on_exit_cb;
    opts.stdio_count = 3;
    opts.stdio = stdio;

    bench_mark t0 = w8_begin();
    for (long i = 0; i < w8_par && i < w8_n; i++)
        spawn_one();
    uv_run(loop, UV_RUN_DEFAULT);
    w8_report(t0);
    uv_loop_close(loop);
    free(procs);
    return 0;
}
