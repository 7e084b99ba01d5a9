/* SPDX-License-Identifier: MIT */
/* llpy_soon_bind's checks (bindings/python/cpython/llpy.h): the CPython
 * binding's call_soon and round of handles in C use Handle and loop slots
 * at the offsets it is given, so a layout it cannot trust is refused with
 * LL_EINVAL and llpy_soon_method stays NULL; one layout per process. What
 * the builtin does with real objects is checked from Python
 * (bindings/python/tests/test_callbacks_hotpath.py). */
#include <stddef.h>
#include <string.h>

#include "libloop.h"
#include "llpy.h"
#include "check.h"
#include "bind_tables.h"

static char objects[9][32]; /* stand-ins for the layout's Python objects */

static llpy_soon_layout valid(void) {
    llpy_soon_layout l;
    memset(&l, 0, sizeof l);
    l.handle_type = objects[0];
    l.fallback = objects[1];
    l.signal_name = objects[2];
    l.context_name = objects[3];
    l.false_ = objects[4];
    l.true_ = objects[5];
    l.none = objects[6];
    l.alloc = l.tuple_new = l.tuple_set = l.tuple_size = (void *)stub;
    l.context_copy = l.callable = l.no_memory = l.str_equals = (void *)stub;
    l.exc_matches = l.call_object = (void *)stub;
    l.report = objects[7];
    l.exit_types = objects[8];
    for (int i = 0; i < LLPY_HANDLE_SLOTS; i++)
        l.handle_slot[i] = 16 + 8 * i; /* CPython 3.11's Handle: 16..64 */
    l.handle_size = 80;
    for (int i = 0; i < LLPY_LOOP_SLOTS; i++)
        l.loop_slot[i] = 104 + 16 * i;
    l.loop_size = 192;
    return l;
}

static void test_refused_before_llpy_bind(void) {
    llpy_soon_layout l = valid();
    CHECK(llpy_soon_method() == NULL);
    CHECK(llpy_run_method() == NULL);
    CHECK_EQ_INT(llpy_soon_bind(&l), LL_EINVAL);
    CHECK(llpy_soon_method() == NULL);
}

static void test_bad_layouts_refused(void) {
    CHECK_EQ_INT(llpy_bind(api_table_of_stubs(), LLPY_PY_COUNT, ll_table, LLPY_LL_COUNT), 0);
    CHECK_EQ_INT(llpy_soon_bind(NULL), LL_EINVAL);
    llpy_soon_layout l;

    l = valid(); l.handle_type = NULL;                 /* an object missing */
    CHECK_EQ_INT(llpy_soon_bind(&l), LL_EINVAL);
    l = valid(); l.str_equals = NULL;                  /* a function missing */
    CHECK_EQ_INT(llpy_soon_bind(&l), LL_EINVAL);
    l = valid(); l.exit_types = NULL;
    CHECK_EQ_INT(llpy_soon_bind(&l), LL_EINVAL);
    l = valid(); l.handle_slot[LLPY_HANDLE_ARGS] = 8; /* inside the header */
    CHECK_EQ_INT(llpy_soon_bind(&l), LL_EINVAL);
    l = valid(); l.handle_slot[LLPY_HANDLE_REPR] = -16;
    CHECK_EQ_INT(llpy_soon_bind(&l), LL_EINVAL);
    l = valid(); l.loop_slot[LLPY_LOOP_SIGNALLED] = 139; /* unaligned */
    CHECK_EQ_INT(llpy_soon_bind(&l), LL_EINVAL);
    l = valid(); l.handle_slot[LLPY_HANDLE_SOURCE_TRACEBACK] = 80; /* past the object */
    CHECK_EQ_INT(llpy_soon_bind(&l), LL_EINVAL);
    l = valid(); l.loop_size = 100;                    /* the loop's slots past it */
    CHECK_EQ_INT(llpy_soon_bind(&l), LL_EINVAL);
    l = valid(); l.handle_slot[LLPY_HANDLE_LOOP] = l.handle_slot[LLPY_HANDLE_CONTEXT];
    CHECK_EQ_INT(llpy_soon_bind(&l), LL_EINVAL);      /* two slots at one place */
    CHECK(llpy_soon_method() == NULL);
}

static void test_one_layout_per_process(void) {
    llpy_soon_layout l = valid();
    CHECK_EQ_INT(llpy_soon_bind(&l), 0);
    const void *def = llpy_soon_method();
    CHECK(def != NULL);
    CHECK_EQ_INT(llpy_soon_bind(&l), 0);              /* the same again */
    l.loop_slot[LLPY_LOOP_READY_APPEND] += 8;         /* another */
    CHECK_EQ_INT(llpy_soon_bind(&l), LL_EINVAL);
    CHECK(llpy_soon_method() == def);
    /* CPython's PyMethodDef: name, function, flags (FASTCALL|KEYWORDS). */
    const struct { const char *name; void *meth; int flags; } *m = def;
    CHECK_EQ_STR(m->name, "call_soon");
    CHECK(m->meth != NULL);
    CHECK_EQ_INT(m->flags, 0x0080 | 0x0002);
    const struct { const char *name; void *meth; int flags; } *run = llpy_run_method();
    CHECK(run != NULL);
    CHECK_EQ_STR(run->name, "run_handles");
    CHECK_EQ_INT(run->flags, 0x0080);
}

int main(void) {
    RUN_TEST(test_refused_before_llpy_bind);
    RUN_TEST(test_bad_layouts_refused);
    RUN_TEST(test_one_layout_per_process);
    return CHECK_REPORT();
}
