/* SPDX-License-Identifier: MIT */
/* processes.c — run `sh -c 'echo hello; exit 3'` with its stdout as a pipe
 * transport, collect the output, and read the return code. */
#include <errno.h>
#include <string.h>

#include "must.h"

struct child {
    char out[64];
    size_t len;
    int exited, code, pipe_lost;
};

static void maybe_stop(ll_loop loop, struct child *c) {
    if (c->exited && c->pipe_lost) /* the exit and the pipe's end come in either order */
        MUST(ll_loop_stop(loop));
}

static int on_event(ll_loop loop, const ll_event *ev, void *arg) {
    struct child *c = arg;
    switch (ev->kind) {
    case LL_DATA_RECEIVED: /* ev->fd is the child's fd: 1 */
        EXPECT(ev->fd == 1 && c->len + ev->len < sizeof c->out);
        memcpy(c->out + c->len, ev->data, ev->len);
        c->len += ev->len;
        break;
    case LL_CONNECTION_LOST:
        c->pipe_lost = 1;
        maybe_stop(loop, c);
        break;
    case LL_PROCESS_EXITED:
        c->exited = 1;
        c->code = ev->code;
        maybe_stop(loop, c);
        break;
    }
    return 0;
}

int main(void) {
    ll_loop loop;
    MUST(ll_loop_new(&loop));
    const char *argv[] = {"sh", "-c", "echo hello; exit 3", NULL};
    ll_process_options opts = {
        .file = "sh",
        .argv = argv,
        .stdio = {LL_STDIO_DEVNULL, LL_STDIO_PIPE, LL_STDIO_INHERIT},
    };
    struct child c = {0};
    ll_process p;
    MUST(ll_spawn(loop, &opts, on_event, &c, &p));
    MUST(ll_loop_run_forever(loop));
    EXPECT(c.len == 6 && memcmp(c.out, "hello\n", 6) == 0);
    int rc;
    MUST(ll_process_returncode(p, &rc));
    EXPECT(rc == 3 && c.code == 3);
    EXPECT(ll_process_kill(p) == -ESRCH); /* exited: a recycled pid is never signalled */

    const char *missing_argv[] = {"no-such-program-here", NULL};
    opts.file = missing_argv[0];
    opts.argv = missing_argv;
    ll_process q;
    EXPECT(ll_spawn(loop, &opts, on_event, &c, &q) == -ENOENT); /* an error, not exit 127 */
    MUST(ll_release(p));
    MUST(ll_release(loop));
    printf("processes: child said %.*s and exited with %d\n", (int)c.len - 1, c.out, rc);
    return 0;
}
