/* SPDX-License-Identifier: MIT */
/*
 * loop_checks.h — checks shared by libloop's C tests (include after check.h).
 *
 *   count_cb               an ll_callback that adds 1 to the int at arg
 *   STILL_RUNS(loop)       after a bad call: a normal callback still runs on
 *                          loop (reports the caller's line on failure)
 */
#ifndef LIBLOOP_TEST_LOOP_CHECKS_H
#define LIBLOOP_TEST_LOOP_CHECKS_H

#include "libloop.h"
#include "check.h"

static void count_cb(ll_loop loop, void *arg) {
    (void)loop;
    *(int *)arg += 1;
}

static void still_runs_at(ll_loop loop, const char *file, int line) {
    int ran = 0;
    int rc = ll_call_soon(loop, count_cb, &ran, NULL);
    if (rc == 0)
        rc = ll_loop_run_once(loop, LL_RUN_NOWAIT);
    if (rc == 0 && ran == 1)
        check_passed++;
    else
        CHECK_FAIL_AT(file, line, "loop no longer runs callbacks (rc %d, ran %d)", rc, ran);
}
#define STILL_RUNS(loop) still_runs_at((loop), __FILE__, __LINE__)

#endif /* LIBLOOP_TEST_LOOP_CHECKS_H */
