/* SPDX-License-Identifier: MIT */
/* Ids: a released id stays LL_EBADHANDLE while its slot is reused over and
 * over, and no id is ever issued twice, for futures, handles and loops made
 * and released in a tight loop (the pattern that wore out one slot's
 * generation counter when free slots were reused last-in first-out). */
#include <stdlib.h>

#include "libloop.h"
#include "check.h"

#define CYCLES 200000

static int cmp_u64(const void *a, const void *b) {
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

/* How many ids of ids[0..n) are 0 or repeated. */
static int bad_ids(uint64_t *ids, int n) {
    qsort(ids, (size_t)n, sizeof ids[0], cmp_u64);
    int bad = 0;
    for (int i = 0; i < n; i++)
        if (ids[i] == 0 || (i > 0 && ids[i] == ids[i - 1]))
            bad++;
    return bad;
}

static void cb(ll_loop loop, void *arg) {
    (void)loop;
    (void)arg;
}

static void test_future_ids_never_reissued(void) {
    ll_loop loop;
    CHECK_EQ_INT(ll_loop_new(&loop), 0);
    uint64_t *ids = calloc(CYCLES, sizeof *ids);
    int stale_live = 0;
    for (int i = 0; i < CYCLES; i++) {
        ll_future f = 0;
        if (ll_future_new(loop, &f) != 0)
            break;
        ids[i] = f;
        ll_release(f);
        /* The first few ids, released long ago, are still stale. */
        if (ll_future_done(ids[0]) != LL_EBADHANDLE || ll_release(ids[i / 2]) != LL_EBADHANDLE)
            stale_live++;
    }
    CHECK_EQ_INT(stale_live, 0);
    CHECK_EQ_INT(bad_ids(ids, CYCLES), 0);
    free(ids);
    CHECK_EQ_INT(ll_release(loop), 0);
}

static void test_handle_ids_never_reissued(void) {
    ll_loop loop;
    CHECK_EQ_INT(ll_loop_new(&loop), 0);
    uint64_t *ids = calloc(CYCLES, sizeof *ids);
    int stale_live = 0;
    for (int i = 0; i < CYCLES; i++) {
        ll_handle h = 0;
        if (ll_call_soon(loop, cb, NULL, &h) != 0)
            break;
        ids[i] = h;
        ll_release(h);
        if (ll_handle_cancel(ids[0]) != LL_EBADHANDLE)
            stale_live++;
        if (i % 1000 == 999)
            ll_loop_run_once(loop, LL_RUN_NOWAIT); /* run the callbacks queued so far */
    }
    CHECK_EQ_INT(stale_live, 0);
    CHECK_EQ_INT(bad_ids(ids, CYCLES), 0);
    free(ids);
    CHECK_EQ_INT(ll_release(loop), 0);
}

/* Ids of every kind come from one table: a released loop's id is not
 * revived as a future's, and vice versa. */
static void test_kinds_share_no_ids(void) {
    enum { N = 5000 };
    uint64_t *ids = calloc(2 * N, sizeof *ids);
    ll_loop keep;
    CHECK_EQ_INT(ll_loop_new(&keep), 0);
    for (int i = 0; i < N; i++) {
        ll_loop l = 0;
        ll_future f = 0;
        CHECK(ll_loop_new(&l) == 0 && ll_release(l) == 0);
        CHECK(ll_future_new(keep, &f) == 0 && ll_release(f) == 0);
        ids[2 * i] = l;
        ids[2 * i + 1] = f;
    }
    CHECK_EQ_INT(bad_ids(ids, 2 * N), 0);
    free(ids);
    CHECK_EQ_INT(ll_release(keep), 0);
}

int main(void) {
    RUN_TEST(test_future_ids_never_reissued);
    RUN_TEST(test_handle_ids_never_reissued);
    RUN_TEST(test_kinds_share_no_ids);
    return CHECK_REPORT();
}
