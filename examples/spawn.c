/* SPDX-License-Identifier: MIT */
/* Subprocesses and a signal handler, from the header alone.
 *
 * 1. A two-stage pipeline, `printf ... | sort`: the first child's stdout is
 *    read through a pipe transport and written to the second child's stdin
 *    (back-pressure included: ll_transport_write never blocks); the sorted
 *    lines come back on the second child's stdout.
 * 2. A child that exits 7 and one killed by SIGTERM: their return codes,
 *    as asyncio reports them (7 and -15).
 * 3. A SIGUSR1 handler: the process signals itself; the callback runs on the
 *    loop thread in the next iteration.
 *
 *   asyncio:  create_subprocess_exec(..., stdout=PIPE), loop.add_signal_handler
 *   libuv:    uv_spawn with UV_CREATE_PIPE, uv_signal_start
 */
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "libloop.h"

static ll_transport sort_stdin;
static char sorted[256];
static size_t nsorted;
static int exits_seen, codes[4];
static int got_usr1;

static int producer(ll_loop loop, const ll_event *ev, void *arg) {
    (void)loop;
    (void)arg;
    if (ev->kind == LL_DATA_RECEIVED && ev->fd == 1)
        ll_transport_write(sort_stdin, ev->data, ev->len); /* stage 1 -> stage 2 */
    else if (ev->kind == LL_CONNECTION_LOST && ev->fd == 1)
        ll_transport_close(sort_stdin); /* EOF for sort */
    else if (ev->kind == LL_PROCESS_EXITED)
        codes[exits_seen++] = ev->code;
    return 0;
}

static int sorter(ll_loop loop, const ll_event *ev, void *arg) {
    (void)loop;
    (void)arg;
    if (ev->kind == LL_DATA_RECEIVED && ev->fd == 1 && nsorted + ev->len < sizeof sorted) {
        memcpy(sorted + nsorted, ev->data, ev->len);
        nsorted += ev->len;
    } else if (ev->kind == LL_PROCESS_EXITED) {
        codes[exits_seen++] = ev->code;
    }
    return 0;
}

static int plain(ll_loop loop, const ll_event *ev, void *arg) {
    (void)loop;
    if (ev->kind == LL_PROCESS_EXITED)
        *(int *)arg = ev->code;
    return 0;
}

static void on_usr1(ll_loop loop, void *arg) {
    (void)loop;
    (void)arg;
    got_usr1++;
}

static int spawn(ll_loop loop, const char *const *argv, int in, int out, ll_protocol_fn fn, void *arg, ll_process *p) {
    ll_process_options o = {.file = argv[0], .argv = argv, .stdio = {in, out, LL_STDIO_INHERIT}};
    int rc = ll_spawn(loop, &o, fn, arg, p);
    if (rc != 0)
        fprintf(stderr, "spawn %s: %s\n", argv[0], ll_strerror(rc));
    return rc;
}

int main(void) {
    ll_loop loop;
    ll_process sort_p, print_p, seven_p, sleeper_p;
    int seven = 1000, slept = 1000;
    ll_loop_new(&loop);

    const char *const sort_argv[] = {"sort", NULL};
    const char *const print_argv[] = {"printf", "pear\\napple\\nfig\\n", NULL};
    if (spawn(loop, sort_argv, LL_STDIO_PIPE, LL_STDIO_PIPE, sorter, NULL, &sort_p) != 0 ||
        ll_process_pipe(sort_p, 0, &sort_stdin) != 0 ||
        spawn(loop, print_argv, LL_STDIO_DEVNULL, LL_STDIO_PIPE, producer, NULL, &print_p) != 0)
        return 1;

    const char *const seven_argv[] = {"sh", "-c", "exit 7", NULL};
    const char *const sleep_argv[] = {"sleep", "30", NULL};
    spawn(loop, seven_argv, LL_STDIO_DEVNULL, LL_STDIO_INHERIT, plain, &seven, &seven_p);
    spawn(loop, sleep_argv, LL_STDIO_DEVNULL, LL_STDIO_INHERIT, plain, &slept, &sleeper_p);
    ll_process_terminate(sleeper_p);

    ll_add_signal_handler(loop, SIGUSR1, on_usr1, NULL);
    kill(getpid(), SIGUSR1);

    /* Run until both pipeline stages, both other children and the signal are in. */
    double deadline = ll_loop_time(loop) + 10;
    while ((exits_seen < 2 || seven == 1000 || slept == 1000 || !got_usr1) && ll_loop_time(loop) < deadline)
        ll_loop_run_once(loop, LL_RUN_ONCE);

    printf("pipeline printf | sort gave:\n%.*s", (int)nsorted, sorted);
    printf("pipeline exit codes: %d %d\n", codes[0], codes[1]);
    printf("sh -c 'exit 7' returned %d; sleep killed by SIGTERM returned %d\n", seven, slept);
    printf("SIGUSR1 handler ran %d time(s)\n", got_usr1);
    ll_remove_signal_handler(loop, SIGUSR1);
    ll_release(sort_p);
    ll_release(print_p);
    ll_release(seven_p);
    ll_release(sleeper_p);
    ll_release(loop);

    int ok = strcmp(sorted, "apple\nfig\npear\n") == 0 && codes[0] == 0 && codes[1] == 0 && seven == 7 &&
             slept == -SIGTERM && got_usr1 == 1;
    printf("spawn: %s\n", ok ? "ok" : "FAILED");
    return ok ? 0 : 1;
}
