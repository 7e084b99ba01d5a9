/* SPDX-License-Identifier: MIT */
/* The ABI's struct layouts, which the bindings read by offset (the purego
 * binding's bindings/go/events.go and stats.go, the Python binding's _netlib.py and stats.py): a
 * change here must change them too. */
#include <stddef.h>

#include "libloop.h"
#include "check.h"

static void event_layout(void) {
    CHECK_EQ_INT(offsetof(ll_event, kind), 0);
    CHECK_EQ_INT(offsetof(ll_event, code), 4);
    CHECK_EQ_INT(offsetof(ll_event, fd), 8);
    CHECK_EQ_INT(offsetof(ll_event, transport), 16);
    CHECK_EQ_INT(offsetof(ll_event, data), 24);
    CHECK_EQ_INT(offsetof(ll_event, len), 32);
    CHECK_EQ_INT(offsetof(ll_event, addr), 40);
    CHECK_EQ_INT(offsetof(ll_event, addrlen), 48);
    CHECK_EQ_INT(offsetof(ll_event, result), 52);
    CHECK_EQ_INT(offsetof(ll_event, arg), 56);
    CHECK_EQ_INT(sizeof(ll_event), 64);
}

static void process_options_layout(void) {
    CHECK_EQ_INT(offsetof(ll_process_options, file), 0);
    CHECK_EQ_INT(offsetof(ll_process_options, argv), 8);
    CHECK_EQ_INT(offsetof(ll_process_options, env), 16);
    CHECK_EQ_INT(offsetof(ll_process_options, cwd), 24);
    CHECK_EQ_INT(offsetof(ll_process_options, stdio), 32);
    CHECK_EQ_INT(offsetof(ll_process_options, flags), 44);
    CHECK_EQ_INT(sizeof(ll_process_options), 48);
}

static void spawn_extra_layout(void) {
    CHECK_EQ_INT(offsetof(ll_spawn_extra, size), 0);
    CHECK_EQ_INT(offsetof(ll_spawn_extra, pass_fds), 8);
    CHECK_EQ_INT(offsetof(ll_spawn_extra, n_pass_fds), 16);
    CHECK_EQ_INT(offsetof(ll_spawn_extra, inherit_fds), 20);
    CHECK_EQ_INT(offsetof(ll_spawn_extra, uid), 24);
    CHECK_EQ_INT(offsetof(ll_spawn_extra, gid), 28);
    CHECK_EQ_INT(offsetof(ll_spawn_extra, groups), 32);
    CHECK_EQ_INT(offsetof(ll_spawn_extra, n_groups), 40);
    CHECK_EQ_INT(offsetof(ll_spawn_extra, umask), 44);
    CHECK_EQ_INT(offsetof(ll_spawn_extra, pgid), 48);
    CHECK_EQ_INT(offsetof(ll_spawn_extra, pipe_size), 52);
    CHECK_EQ_INT(sizeof(ll_spawn_extra), 56);
    /* LL_SPAWN_EXTRA_INIT asks for nothing. */
    ll_spawn_extra x = LL_SPAWN_EXTRA_INIT;
    CHECK_EQ_INT((int)x.size, 56);
    CHECK(x.pass_fds == NULL && x.n_pass_fds == 0 && x.inherit_fds == 0 && x.groups == NULL);
    CHECK(x.uid == -1 && x.gid == -1 && x.n_groups == -1 && x.umask == -1 && x.pgid == -1 && x.pipe_size == 0);
}

static void loop_stats_layout(void) {
    CHECK_EQ_INT(offsetof(struct ll_loop_stats, size), 0);
    CHECK_EQ_INT(offsetof(struct ll_loop_stats, iterations), 8);
    CHECK_EQ_INT(offsetof(struct ll_loop_stats, events), 16);
    CHECK_EQ_INT(offsetof(struct ll_loop_stats, callbacks), 24);
    CHECK_EQ_INT(offsetof(struct ll_loop_stats, idle_ns), 32);
    CHECK_EQ_INT(offsetof(struct ll_loop_stats, running_ns), 40);
    CHECK_EQ_INT(offsetof(struct ll_loop_stats, ready), 48);
    CHECK_EQ_INT(offsetof(struct ll_loop_stats, timers), 56);
    CHECK_EQ_INT(offsetof(struct ll_loop_stats, fds), 64);
    CHECK_EQ_INT(offsetof(struct ll_loop_stats, tasks), 72);
    CHECK_EQ_INT(sizeof(struct ll_loop_stats), 80);
    CHECK_EQ_INT(LL_LOOP_STATS_V1_SIZE, 80);
}

int main(void) {
    RUN_TEST(event_layout);
    RUN_TEST(process_options_layout);
    RUN_TEST(spawn_extra_layout);
    RUN_TEST(loop_stats_layout);
    return CHECK_REPORT();
}
