/* SPDX-License-Identifier: MIT */
/* llpy_host_run (bindings/python/cpython/host.c): libloop's host-queue
 * trampoline calls the loop's Python round holding the GIL, returns its
 * truth, and reports what the round raises (or a truth test that fails)
 * as unraisable, returning 0; nothing is called before llpy_bind or for a
 * NULL round. Stand-ins for the C API record what was called. What the
 * real round does is checked from Python (test_callbacks_hotpath.py and
 * every network suite, which run through it). */
#include <stddef.h>
#include <string.h>

#include "libloop.h"
#include "llpy.h"
#include "check.h"
#include "bind_tables.h"

static int gil_held, gil_taken, unraisable, refs;
static int round_result;            /* 1, 0: returned object's truth; -1: raises */
static int truth_fails;             /* PyObject_IsTrue fails */
static char round_fn, result_obj;   /* the round and what it returns */

static int f_gil_ensure(void) { CHECK(!gil_held); gil_held = 1; gil_taken++; return 7; }
static void f_gil_release(int s) { CHECK(gil_held && s == 7); gil_held = 0; }
static void *f_call(void *fn, void *const *args, size_t nargsf, void *kw) {
    CHECK(gil_held && fn == &round_fn && args == NULL && nargsf == 0 && kw == NULL);
    if (round_result < 0)
        return NULL;
    refs++;
    return &result_obj;
}
static int f_is_true(void *o) { CHECK(o == &result_obj); return truth_fails ? -1 : round_result; }
static void f_decref(void *o) { CHECK(o == &result_obj); refs--; }
static void f_write_unraisable(void *o) { CHECK(gil_held && o == &round_fn); unraisable++; }
static void f_unused(void) { CHECK(0); }

static void *api_table[LLPY_PY_COUNT];

static void test_nothing_called_before_bind(void) {
    llpy_host_layout none;
    memset(&none, 0, sizeof none);
    CHECK_EQ_INT(llpy_host_bind(&none), LL_EINVAL);
    CHECK_EQ_INT(llpy_host_run(1, &round_fn), 0);
    CHECK_EQ_INT(gil_taken, 0);
}

static void test_round_truth_is_returned(void) {
    for (int i = 0; i < LLPY_PY_COUNT; i++)
        api_table[i] = (void *)f_unused;
    api_table[LLPY_GILSTATE_ENSURE] = (void *)f_gil_ensure;
    api_table[LLPY_GILSTATE_RELEASE] = (void *)f_gil_release;
    api_table[LLPY_OBJECT_VECTORCALL] = (void *)f_call;
    api_table[LLPY_OBJECT_IS_TRUE] = (void *)f_is_true;
    api_table[LLPY_DECREF] = (void *)f_decref;
    api_table[LLPY_ERR_WRITE_UNRAISABLE] = (void *)f_write_unraisable;
    CHECK_EQ_INT(llpy_bind(api_table, LLPY_PY_COUNT, ll_table, LLPY_LL_COUNT), 0);
    round_result = 1;
    CHECK_EQ_INT(llpy_host_run(1, &round_fn), 1);
    round_result = 0;
    CHECK_EQ_INT(llpy_host_run(1, &round_fn), 0);
    CHECK_EQ_INT(gil_taken, 2);
    CHECK(!gil_held);
    CHECK_EQ_INT(refs, 0); /* the result released */
    CHECK_EQ_INT(unraisable, 0);
}

static void test_errors_are_unraisable_and_zero(void) {
    round_result = -1; /* the round raises */
    CHECK_EQ_INT(llpy_host_run(1, &round_fn), 0);
    CHECK_EQ_INT(unraisable, 1);
    round_result = 1; /* its result's truth cannot be told */
    truth_fails = 1;
    CHECK_EQ_INT(llpy_host_run(1, &round_fn), 0);
    CHECK_EQ_INT(unraisable, 2);
    CHECK_EQ_INT(refs, 0);
    CHECK(!gil_held);
    truth_fails = 0;
}

/* llpy_host_bind: refused before llpy_bind is done by the first test
 * (nothing bound then); here a NULL layout, a NULL entry, bad offsets;
 * then taken once, again equal, and not another. */
static void test_host_bind_checks_its_layout(void) {
    static char objs[13];
    llpy_host_layout l;
    memset(&l, 0, sizeof l);
    void **fields[] = {&l.host_run_name, &l.run_ready_name, &l.flush_name, &l.sig_watch_name,
                       &l.stash, &l.false_, &l.true_, &l.none, &l.one, &l.size,
                       &l.inplace_add, &l.inplace_sub, &l.long_as_i64};
    for (int i = 0; i < 13; i++)
        *fields[i] = &objs[i];
    l.loop_size = 256;
    for (int i = 0; i < LLPY_HOST_LOOP_SLOTS; i++)
        l.loop_slot[i] = 16 + 8 * i;
    CHECK(llpy_host_round_method() == NULL);
    CHECK_EQ_INT(llpy_host_bind(NULL), LL_EINVAL);
    l.stash = NULL;
    CHECK_EQ_INT(llpy_host_bind(&l), LL_EINVAL);
    l.stash = &objs[4];
    l.loop_slot[3] = l.loop_slot[2]; /* two slots at one offset */
    CHECK_EQ_INT(llpy_host_bind(&l), LL_EINVAL);
    l.loop_slot[3] = 8; /* inside the object header */
    CHECK_EQ_INT(llpy_host_bind(&l), LL_EINVAL);
    l.loop_slot[3] = 16 + 8 * 3 + 1; /* unaligned */
    CHECK_EQ_INT(llpy_host_bind(&l), LL_EINVAL);
    l.loop_slot[3] = 256; /* past the object */
    CHECK_EQ_INT(llpy_host_bind(&l), LL_EINVAL);
    CHECK(llpy_host_round_method() == NULL);
    l.loop_slot[3] = 16 + 8 * 3;
    CHECK_EQ_INT(llpy_host_bind(&l), 0);
    CHECK(llpy_host_round_method() != NULL);
    CHECK_EQ_INT(llpy_host_bind(&l), 0);
    l.one = &objs[0];
    CHECK_EQ_INT(llpy_host_bind(&l), LL_EINVAL);
}

static void test_no_round_calls_nothing(void) {
    int taken = gil_taken;
    CHECK_EQ_INT(llpy_host_run(1, NULL), 0);
    CHECK_EQ_INT(gil_taken, taken);
}

int main(void) {
    RUN_TEST(test_nothing_called_before_bind);
    RUN_TEST(test_round_truth_is_returned);
    RUN_TEST(test_errors_are_unraisable_and_zero);
    RUN_TEST(test_no_round_calls_nothing);
    RUN_TEST(test_host_bind_checks_its_layout);
    return CHECK_REPORT();
}
