/* SPDX-License-Identifier: MIT */
/* llpy_stream_bind's checks (bindings/python/cpython/llpy.h): the CPython
 * binding's StreamTransport.write, writelines, is_closing, get_extra_info
 * and loop flush in C use
 * transport and loop slots at the offsets they are given, so a layout it
 * cannot trust is refused with LL_EINVAL and the methods stay NULL; one
 * layout per process. What the methods do with real objects is checked
 * from Python (bindings/python/tests/test_stream_write_c.py). */
#include <stddef.h>
#include <string.h>

#include "libloop.h"
#include "llpy.h"
#include "check.h"
#include "bind_tables.h"

static char objects[24][32]; /* stand-ins for the layout's Python objects */

static llpy_stream_layout valid(void) {
    llpy_stream_layout l;
    memset(&l, 0, sizeof l);
    void **objs[] = {&l.transport_type, &l.loop_type, &l.fallback, &l.written_name,
                     &l.bytes_type, &l.bytearray_type, &l.memoryview_type, &l.false_,
                     &l.true_, &l.none, &l.zero, &l.list_type, &l.flush_one, &l.flush_failed,
                     &l.extra_fallback, &l.no_extra, &l.unknown, &l.str_type,
                     &l.writelines_fallback};
    for (size_t i = 0; i < sizeof objs / sizeof objs[0]; i++)
        *objs[i] = objects[i];
    l.list_append = l.err_clear = l.tuple_size = l.no_memory = (void *)stub;
    l.list_size = l.list_get = l.list_set_slice = l.str_equals = (void *)stub;
    l.concat_max = 1024;
    for (int i = 0; i < LLPY_STREAM_SLOTS; i++)
        l.slot[i] = 24 + 8 * i; /* a StreamTransport's slots */
    l.size = 24 + 8 * LLPY_STREAM_SLOTS + 64;
    for (int i = 0; i < LLPY_STREAM_LOOP_SLOTS; i++)
        l.loop_slot[i] = 200 + 8 * i;
    l.loop_size = 256;
    return l;
}

static void test_refused_before_llpy_bind(void) {
    llpy_stream_layout l = valid();
    CHECK(llpy_stream_write_method() == NULL);
    CHECK(llpy_stream_is_closing_method() == NULL);
    CHECK(llpy_stream_flush_method() == NULL);
    CHECK(llpy_stream_extra_info_method() == NULL);
    CHECK(llpy_stream_writelines_method() == NULL);
    CHECK_EQ_INT(llpy_stream_bind(&l), LL_EINVAL);
    CHECK(llpy_stream_write_method() == NULL);
}

static void test_bad_layouts_refused(void) {
    CHECK_EQ_INT(llpy_bind(api_table_of_stubs(), LLPY_PY_COUNT, ll_table, LLPY_LL_COUNT), 0);
    CHECK_EQ_INT(llpy_stream_bind(NULL), LL_EINVAL);
    llpy_stream_layout l;

    l = valid(); l.fallback = NULL;                        /* an object missing */
    CHECK_EQ_INT(llpy_stream_bind(&l), LL_EINVAL);
    l = valid(); l.flush_failed = NULL;
    CHECK_EQ_INT(llpy_stream_bind(&l), LL_EINVAL);
    l = valid(); l.list_set_slice = NULL;                  /* a function missing */
    CHECK_EQ_INT(llpy_stream_bind(&l), LL_EINVAL);
    l = valid(); l.extra_fallback = NULL;                  /* get_extra_info's */
    CHECK_EQ_INT(llpy_stream_bind(&l), LL_EINVAL);
    l = valid(); l.str_equals = NULL;
    CHECK_EQ_INT(llpy_stream_bind(&l), LL_EINVAL);
    l = valid(); l.writelines_fallback = NULL;             /* writelines' */
    CHECK_EQ_INT(llpy_stream_bind(&l), LL_EINVAL);
    l = valid(); l.concat_max = -1;                        /* a negative limit */
    CHECK_EQ_INT(llpy_stream_bind(&l), LL_EINVAL);
    l = valid(); l.slot[LLPY_STREAM_SOCKNAME] = l.slot[LLPY_STREAM_PEERNAME];
    CHECK_EQ_INT(llpy_stream_bind(&l), LL_EINVAL);
    l = valid(); l.slot[LLPY_STREAM_TID] = 8;              /* inside the header */
    CHECK_EQ_INT(llpy_stream_bind(&l), LL_EINVAL);
    l = valid(); l.slot[LLPY_STREAM_CBUF] = 61;            /* unaligned */
    CHECK_EQ_INT(llpy_stream_bind(&l), LL_EINVAL);
    l = valid(); l.slot[LLPY_STREAM_GATHER_MAX] = l.size;  /* past the object */
    CHECK_EQ_INT(llpy_stream_bind(&l), LL_EINVAL);
    l = valid(); l.loop_slot[LLPY_STREAM_LOOP_WQ] = -8;
    CHECK_EQ_INT(llpy_stream_bind(&l), LL_EINVAL);
    l = valid(); l.slot[LLPY_STREAM_EOF] = l.slot[LLPY_STREAM_LOST]; /* two at one place */
    CHECK_EQ_INT(llpy_stream_bind(&l), LL_EINVAL);
    CHECK(llpy_stream_write_method() == NULL);
    CHECK(llpy_stream_flush_method() == NULL);
    CHECK(llpy_stream_extra_info_method() == NULL);
    CHECK(llpy_stream_writelines_method() == NULL);
}

/* CPython's PyMethodDef: name, function, flags. */
typedef struct {
    const char *name;
    void *meth;
    int flags;
} method_def;

static void test_one_layout_per_process(void) {
    llpy_stream_layout l = valid();
    CHECK_EQ_INT(llpy_stream_bind(&l), 0);
    const method_def *write = llpy_stream_write_method();
    CHECK(write != NULL);
    CHECK_EQ_INT(llpy_stream_bind(&l), 0);                 /* the same again */
    l.slot[LLPY_STREAM_WPEND] += 8 * LLPY_STREAM_SLOTS;    /* another */
    CHECK_EQ_INT(llpy_stream_bind(&l), LL_EINVAL);
    CHECK(llpy_stream_write_method() == write);
    CHECK_EQ_STR(write->name, "write");
    CHECK(write->meth != NULL);
    CHECK_EQ_INT(write->flags, 0x0080 | 0x0002);           /* FASTCALL|KEYWORDS */
    const method_def *closing = llpy_stream_is_closing_method();
    CHECK(closing != NULL);
    CHECK_EQ_STR(closing->name, "is_closing");
    CHECK_EQ_INT(closing->flags, 0x0004);                  /* NOARGS */
    const method_def *flush = llpy_stream_flush_method();
    CHECK(flush != NULL);
    CHECK_EQ_STR(flush->name, "_flush_writes");
    CHECK_EQ_INT(flush->flags, 0x0004);
    const method_def *extra = llpy_stream_extra_info_method();
    CHECK(extra != NULL);
    CHECK_EQ_STR(extra->name, "get_extra_info");
    CHECK_EQ_INT(extra->flags, 0x0080 | 0x0002);           /* FASTCALL|KEYWORDS */
    const method_def *lines = llpy_stream_writelines_method();
    CHECK(lines != NULL);
    CHECK_EQ_STR(lines->name, "writelines");
    CHECK_EQ_INT(lines->flags, 0x0080 | 0x0002);           /* FASTCALL|KEYWORDS */
}

int main(void) {
    RUN_TEST(test_refused_before_llpy_bind);
    RUN_TEST(test_bad_layouts_refused);
    RUN_TEST(test_one_layout_per_process);
    return CHECK_REPORT();
}
