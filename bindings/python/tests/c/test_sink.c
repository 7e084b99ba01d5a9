/* SPDX-License-Identifier: MIT */
/* The Python binding's C side (bindings/python/cpython, llpy.h) against a
 * fake C API: llpy_bind's checks; the sink's routing (listed transports'
 * DATA to protocol.data_received inside their context, every other event
 * to the binding's sink in runs, in order); the GIL taken once per batch
 * with DATA and not at all without; data_received's error to on_error, a
 * lookup error as unraisable, a context that cannot be entered; every
 * reference taken given back; on a real loop, a read event of a transport
 * that an earlier data_received of the same array paused withheld (through
 * libloop's ll_event_withhold) and delivered after resume; and the builtin
 * write's results on a real transport. */
#include <stdlib.h>
#include <sys/socket.h>
#include <unistd.h>

#include "libloop.h"
#include "llpy.h"
#include "check.h"
#include "net_util.h" /* tick() */

/* ---- fake objects ------------------------------------------------------ */

enum { KEY = 1, BYTES, STATIC };

typedef struct obj {
    int tag;
    long refs;             /* STATIC: references taken minus given back */
    unsigned long long id; /* KEY: the transport id */
    char data[64];         /* BYTES */
    size_t len;
    int entered;           /* a context: PyContext_Enter'd */
    struct obj *items[3];  /* an entry: (context, protocol, transport) */
    int name;              /* a protocol's or transport's number in the log */
} obj;

static obj dict, method_name, on_error, none, exc_type, exc_value, exc_tb;
static obj ctx[4], proto[4], trans[4], entry[4];
static unsigned long long listed[4]; /* the dict: listed[i] -> entry[i] */
static unsigned long long lookup_fails; /* an id whose lookup raises */
static int error_set, gil_held, gil_ensures, allocated;
static int pause_other;      /* data_received pauses the other listed transport */
static ll_transport paused;  /* ... which it did */
static char log_buf[512];

static void logf_(const char *s) { strncat(log_buf, s, sizeof log_buf - strlen(log_buf) - 1); }

static void *new_obj(int tag) {
    obj *o = calloc(1, sizeof *o);
    o->tag = tag;
    allocated++;
    return o;
}

static int f_gil_ensure(void) { gil_ensures++; gil_held++; return 7; }
static void f_gil_release(int s) { CHECK_EQ_INT(s, 7); gil_held--; }
static void *f_long_from_u64(unsigned long long v) { CHECK(!error_set); obj *o = new_obj(KEY); o->id = v; return o; }
static unsigned long long f_long_as_u64(void *o) {
    if (((obj *)o)->tag != KEY) { error_set = 1; return (unsigned long long)-1; }
    return ((obj *)o)->id;
}
static void *f_long_from_i64(long long v) { obj *o = new_obj(KEY); o->id = (unsigned long long)v; return o; }
static void *f_dict_get(void *d, void *key) {
    CHECK(d == &dict && !error_set);
    unsigned long long id = ((obj *)key)->id;
    if (id == lookup_fails) { error_set = 1; return NULL; }
    for (int i = 0; i < 4; i++)
        if (listed[i] == id)
            return &entry[i];
    return NULL;
}
static void *f_tuple_get(void *t, ptrdiff_t i) { CHECK(!error_set); return ((obj *)t)->items[i]; }
static void *f_bytes_from(const char *s, ptrdiff_t n) {
    CHECK(!error_set);
    if (n == 5 && memcmp(s, "nomem", 5) == 0) { /* MemoryError */
        error_set = 1;
        return NULL;
    }
    obj *o = new_obj(BYTES);
    memcpy(o->data, s, (size_t)n);
    o->len = (size_t)n;
    return o;
}
static int f_bytes_as(void *o, char **buf, ptrdiff_t *n) {
    if (((obj *)o)->tag != BYTES) { error_set = 1; return -1; }
    *buf = ((obj *)o)->data;
    *n = (ptrdiff_t)((obj *)o)->len;
    return 0;
}
static int f_ctx_enter(void *c) {
    CHECK(!error_set); /* (no C API call while an exception is set) */
    if (((obj *)c)->entered) { error_set = 1; return -1; }
    ((obj *)c)->entered = 1;
    return 0;
}
static int f_ctx_exit(void *c) { CHECK(((obj *)c)->entered); ((obj *)c)->entered = 0; return 0; }
static void f_incref(void *o) { if (((obj *)o)->tag == STATIC) ((obj *)o)->refs++; }
static void f_decref(void *o) {
    obj *x = o;
    if (x->tag == STATIC) { x->refs--; return; }
    allocated--;
    free(x);
}
#define NARGS(f) ((f) & ~((size_t)1 << (8 * sizeof(size_t) - 1)))
/* protocol.data_received(bytes): "D<n>:<bytes> "; b"raise" raises. */
static void *f_call_method(void *name, void *const *args, size_t nargsf, void *kw) {
    CHECK(name == &method_name && kw == NULL && NARGS(nargsf) == 2 && !error_set);
    obj *p = args[0], *b = args[1];
    CHECK(ctx[p->name].entered); /* inside the transport's context */
    char s[80];
    snprintf(s, sizeof s, "D%d:%.*s ", p->name, (int)b->len, b->data);
    logf_(s);
    if (pause_other) { /* the real-loop test: stop the other listed transport */
        pause_other = 0;
        CHECK_EQ_INT(ll_transport_pause_reading(listed[3 - p->name]), 0);
        paused = listed[3 - p->name];
    }
    if (b->len == 5 && memcmp(b->data, "raise", 5) == 0) {
        error_set = 1;
        return NULL;
    }
    none.refs++;
    return &none;
}
/* on_error(transport, exc): "E<n> ". */
static void *f_call(void *fn, void *const *args, size_t nargsf, void *kw) {
    CHECK(fn == &on_error && kw == NULL && NARGS(nargsf) == 2 && args[1] == &exc_value);
    CHECK(!error_set);
    char s[16];
    snprintf(s, sizeof s, "E%d ", ((obj *)args[0])->name);
    logf_(s);
    none.refs++;
    return &none;
}
static void f_err_fetch(void **t, void **v, void **tb) {
    CHECK(error_set);
    error_set = 0;
    *t = &exc_type; *v = &exc_value; *tb = &exc_tb; /* references handed over */
    exc_type.refs++; exc_value.refs++; exc_tb.refs++;
}
static void f_err_normalize(void **t, void **v, void **tb) { (void)t; (void)v; (void)tb; }
static int f_set_tb(void *v, void *tb) { CHECK(v == &exc_value && tb == &exc_tb); return 0; }
static void *f_err_occurred(void) { return error_set ? &exc_type : NULL; }
static void f_write_unraisable(void *o) { (void)o; CHECK(error_set); error_set = 0; logf_("U "); }

static void f_unused(void) { CHECK(0); }

static void *api[LLPY_PY_COUNT] = {
    [LLPY_GILSTATE_ENSURE] = (void *)f_gil_ensure,
    [LLPY_GILSTATE_RELEASE] = (void *)f_gil_release,
    [LLPY_LONG_FROM_UNSIGNED_LONG_LONG] = (void *)f_long_from_u64,
    [LLPY_LONG_AS_UNSIGNED_LONG_LONG] = (void *)f_long_as_u64,
    [LLPY_LONG_FROM_LONG_LONG] = (void *)f_long_from_i64,
    [LLPY_DICT_GET_ITEM_WITH_ERROR] = (void *)f_dict_get,
    [LLPY_TUPLE_GET_ITEM] = (void *)f_tuple_get,
    [LLPY_BYTES_FROM_STRING_AND_SIZE] = (void *)f_bytes_from,
    [LLPY_BYTES_AS_STRING_AND_SIZE] = (void *)f_bytes_as,
    [LLPY_CONTEXT_ENTER] = (void *)f_ctx_enter,
    [LLPY_CONTEXT_EXIT] = (void *)f_ctx_exit,
    [LLPY_OBJECT_VECTORCALL_METHOD] = (void *)f_call_method,
    [LLPY_OBJECT_VECTORCALL] = (void *)f_call,
    [LLPY_INCREF] = (void *)f_incref,
    [LLPY_DECREF] = (void *)f_decref,
    [LLPY_ERR_FETCH] = (void *)f_err_fetch,
    [LLPY_ERR_NORMALIZE_EXCEPTION] = (void *)f_err_normalize,
    [LLPY_EXCEPTION_SET_TRACEBACK] = (void *)f_set_tb,
    [LLPY_ERR_OCCURRED] = (void *)f_err_occurred,
    [LLPY_ERR_WRITE_UNRAISABLE] = (void *)f_write_unraisable,
    /* (the sink calls none of these: write.c's and host.c's) */
    [LLPY_OBJECT_GET_BUFFER] = (void *)f_unused,
    [LLPY_BUFFER_RELEASE] = (void *)f_unused,
    [LLPY_OBJECT_IS_TRUE] = (void *)f_unused,
};

/* libloop's functions, from the libloop.so this test links. */
static void *ll_api[LLPY_LL_COUNT] = {
    [LLPY_TRANSPORT_WRITE_ASYNC_PACKED] = (void *)ll_transport_write_async_packed,
    [LLPY_EVENT_WITHHOLD] = (void *)ll_event_withhold,
    [LLPY_LOOP_HOST_READY] = (void *)ll_loop_host_ready,
};

/* The binding's own sink: "O<n>:<kinds> ". */
static void other(ll_loop loop, ll_event *evs, size_t n, void *arg) {
    (void)loop;
    CHECK(arg == &dict);
    char s[64];
    int k = snprintf(s, sizeof s, "O%zu:", n);
    for (size_t i = 0; i < n && k < 60; i++)
        k += snprintf(s + k, sizeof s - (size_t)k, "%d", evs[i].kind);
    logf_(s);
    logf_(" ");
}

static void setup(void) {
    obj *statics[] = {&dict, &method_name, &on_error, &none, &exc_type, &exc_value, &exc_tb};
    for (size_t i = 0; i < sizeof statics / sizeof *statics; i++)
        *statics[i] = (obj){.tag = STATIC};
    for (int i = 0; i < 4; i++) {
        ctx[i] = proto[i] = trans[i] = entry[i] = (obj){.tag = STATIC, .name = i};
        entry[i].items[0] = &ctx[i];
        entry[i].items[1] = &proto[i];
        entry[i].items[2] = &trans[i];
        listed[i] = 0;
    }
    lookup_fails = 0;
    log_buf[0] = 0;
    gil_ensures = 0;
}

static ll_event ev(int kind, ll_transport t, const char *data) {
    return (ll_event){.kind = kind, .fd = -1, .transport = t, .data = data,
                      .len = data ? strlen(data) : 0};
}

/* Every reference the sink took is given back; nothing left allocated. */
static void check_balanced(void) {
    CHECK_EQ_INT(allocated, 0);
    CHECK_EQ_INT(gil_held, 0);
    CHECK_EQ_INT(error_set, 0);
    obj *statics[] = {&dict, &method_name, &on_error, &none, &exc_type, &exc_value, &exc_tb};
    for (size_t i = 0; i < sizeof statics / sizeof *statics; i++)
        CHECK_EQ_INT(statics[i]->refs, 0);
    for (int i = 0; i < 4; i++) {
        CHECK_EQ_INT(entry[i].refs, 0);
        CHECK(!ctx[i].entered);
    }
}

static void test_bind_checks(void) {
    void *table[LLPY_PY_COUNT], *ll[LLPY_LL_COUNT];
    memcpy(table, api, sizeof table);
    memcpy(ll, ll_api, sizeof ll);
    llpy_sink *s = (llpy_sink *)&dict;
    CHECK_EQ_INT(llpy_interface(), LLPY_INTERFACE);
    CHECK_EQ_INT(llpy_sink_new(&dict, &method_name, &on_error, other, &dict, &s), LL_EINVAL);
    CHECK(s == NULL); /* (before llpy_bind) */
    CHECK(llpy_write_method() == NULL);
    CHECK_EQ_INT(llpy_bind(NULL, LLPY_PY_COUNT, ll, LLPY_LL_COUNT), LL_EINVAL);
    CHECK_EQ_INT(llpy_bind(table, LLPY_PY_COUNT - 1, ll, LLPY_LL_COUNT), LL_EINVAL);
    CHECK_EQ_INT(llpy_bind(table, LLPY_PY_COUNT, NULL, LLPY_LL_COUNT), LL_EINVAL);
    CHECK_EQ_INT(llpy_bind(table, LLPY_PY_COUNT, ll, LLPY_LL_COUNT - 1), LL_EINVAL);
    ll[LLPY_EVENT_WITHHOLD] = NULL;
    CHECK_EQ_INT(llpy_bind(table, LLPY_PY_COUNT, ll, LLPY_LL_COUNT), LL_EINVAL);
    memcpy(ll, ll_api, sizeof ll);
    table[LLPY_DECREF] = NULL;
    CHECK_EQ_INT(llpy_bind(table, LLPY_PY_COUNT, ll, LLPY_LL_COUNT), LL_EINVAL);
    CHECK(llpy_write_method() == NULL);
    CHECK_EQ_INT(llpy_bind(api, LLPY_PY_COUNT, ll_api, LLPY_LL_COUNT), 0);
    CHECK_EQ_INT(llpy_bind(api, LLPY_PY_COUNT, ll_api, LLPY_LL_COUNT), 0); /* the same again */
    memcpy(table, api, sizeof table);
    table[LLPY_DECREF] = (void *)f_incref;
    CHECK_EQ_INT(llpy_bind(table, LLPY_PY_COUNT, ll_api, LLPY_LL_COUNT), LL_EINVAL); /* another */
    ll[LLPY_EVENT_WITHHOLD] = (void *)f_incref;
    CHECK_EQ_INT(llpy_bind(api, LLPY_PY_COUNT, ll, LLPY_LL_COUNT), LL_EINVAL); /* another libloop */
    CHECK(llpy_write_method() != NULL);
    CHECK_EQ_INT(llpy_sink_new(NULL, &method_name, &on_error, other, NULL, &s), LL_EINVAL);
    CHECK_EQ_INT(llpy_sink_new(&dict, NULL, &on_error, other, NULL, &s), LL_EINVAL);
    CHECK_EQ_INT(llpy_sink_new(&dict, &method_name, NULL, other, NULL, &s), LL_EINVAL);
    CHECK_EQ_INT(llpy_sink_new(&dict, &method_name, &on_error, NULL, NULL, &s), LL_EINVAL);
    CHECK_EQ_INT(llpy_sink_new(&dict, &method_name, &on_error, other, NULL, NULL), LL_EINVAL);
    llpy_sink_free(NULL);
    llpy_sink_deliver(0, NULL, 3, NULL); /* (nothing to do, no crash) */
}

static llpy_sink *new_sink(void) {
    llpy_sink *s = NULL;
    CHECK_EQ_INT(llpy_sink_new(&dict, &method_name, &on_error, other, &dict, &s), 0);
    CHECK(s != NULL);
    return s;
}

static void test_routing_in_order(void) {
    setup();
    llpy_sink *s = new_sink();
    listed[1] = 101;
    listed[3] = 103;
    ll_event evs[] = {
        ev(LL_CONNECTION_MADE, 101, NULL), ev(LL_DATA_RECEIVED, 101, "a"),
        ev(LL_DATA_RECEIVED, 102, "b"), ev(LL_EOF_RECEIVED, 102, NULL),
        ev(LL_DATA_RECEIVED, 101, "c"), ev(LL_DATA_RECEIVED, 103, "d"),
        ev(LL_CONNECTION_LOST, 101, NULL),
    };
    llpy_sink_deliver(1, evs, sizeof evs / sizeof *evs, s);
    CHECK_EQ_STR(log_buf, "O1:1 D1:a O2:23 D1:c D3:d O1:4 ");
    CHECK_EQ_INT(gil_ensures, 1);
    check_balanced();
    llpy_sink_free(s);
}

static void test_no_data_no_gil(void) {
    setup();
    llpy_sink *s = new_sink();
    listed[1] = 101;
    ll_event evs[] = {ev(LL_CONNECTION_MADE, 101, NULL), ev(LL_PAUSE_WRITING, 101, NULL),
                      ev(LL_CONNECTION_LOST, 102, NULL)};
    llpy_sink_deliver(1, evs, 3, s);
    CHECK_EQ_STR(log_buf, "O3:154 ");
    CHECK_EQ_INT(gil_ensures, 0);
    check_balanced();
    llpy_sink_free(s);
}

static void test_errors(void) {
    setup();
    llpy_sink *s = new_sink();
    listed[1] = 101;
    listed[2] = 102;
    lookup_fails = 109;
    ll_event evs[] = {ev(LL_DATA_RECEIVED, 101, "raise"), ev(LL_DATA_RECEIVED, 102, "after"),
                      ev(LL_DATA_RECEIVED, 109, "x"), ev(LL_DATA_RECEIVED, 101, "y"),
                      ev(LL_DATA_RECEIVED, 102, "nomem"), ev(LL_DATA_RECEIVED, 101, "z")};
    llpy_sink_deliver(1, evs, 6, s);
    /* the error reaches on_error (inside the context), the batch goes on;
     * a failed lookup is unraisable and its event goes to the other sink;
     * bytes that cannot be made are on_error's (MemoryError), not
     * data_received's */
    CHECK_EQ_STR(log_buf, "D1:raise E1 D2:after U O1:2 D1:y E2 D1:z ");
    check_balanced();

    /* A context already entered (a nested delivery) cannot be entered:
     * on_error gets that error and data_received is not called. */
    log_buf[0] = 0;
    ctx[2].entered = 1;
    ll_event one = ev(LL_DATA_RECEIVED, 102, "z");
    llpy_sink_deliver(1, &one, 1, s);
    CHECK_EQ_STR(log_buf, "E2 ");
    ctx[2].entered = 0;
    check_balanced();
    llpy_sink_free(s);
}

/* The sink on a real loop: both transports' bytes are read in one
 * iteration, so one array; the first data_received pauses the other
 * transport, whose event of the same array the sink must withhold
 * (ll_event_withhold: kind 0, kept by libloop), neither delivering it nor
 * handing it to the other sink; resume brings it back, first. */
static void test_withheld_in_a_real_delivery(void) {
    setup();
    llpy_sink *s = new_sink();
    ll_loop loop = 0;
    CHECK_EQ_INT(ll_loop_new(&loop), 0);
    CHECK_EQ_INT(ll_loop_set_event_batch(loop, llpy_sink_deliver, s), 0);
    int sv[2][2];
    for (int i = 0; i < 2; i++) {
        CHECK_EQ_INT(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv[i]), 0);
        ll_transport t = 0;
        CHECK_EQ_INT(ll_transport_open(loop, sv[i][0], LL_STREAM, NULL, NULL, &t), 0);
        listed[i + 1] = t;
    }
    for (int i = 0; i < 5 && strstr(log_buf, "O") == NULL; i++)
        tick(loop); /* (the two LL_CONNECTION_MADE, to the other sink) */
    log_buf[0] = 0;
    pause_other = 1;
    CHECK_EQ_INT(write(sv[0][1], "a", 1), 1);
    CHECK_EQ_INT(write(sv[1][1], "b", 1), 1);
    for (int i = 0; i < 50 && paused == 0; i++)
        tick(loop);
    CHECK(paused != 0);
    int first = paused == listed[2] ? 1 : 2; /* whose data_received paused the other */
    char want[32];
    snprintf(want, sizeof want, "D%d:%s ", first, first == 1 ? "a" : "b");
    tick(loop);
    CHECK_EQ_STR(log_buf, want); /* nothing of the paused one, to either sink */
    CHECK_EQ_INT(write(sv[2 - first][1], "c", 1), 1);
    tick(loop);
    CHECK_EQ_STR(log_buf, want);
    CHECK_EQ_INT(ll_transport_resume_reading(paused), 0);
    for (int i = 0; i < 50 && strlen(log_buf) <= strlen(want); i++)
        tick(loop);
    char more[64];
    snprintf(more, sizeof more, "%sD%d:%s ", want, 3 - first, first == 1 ? "b" : "a");
    CHECK(strncmp(log_buf, more, strlen(more)) == 0); /* the withheld bytes, first */
    for (int i = 0; i < 50 && strchr(log_buf + strlen(more), 'c') == NULL; i++)
        tick(loop);
    CHECK(strchr(log_buf + strlen(more), 'c') != NULL); /* then what came later */
    for (int i = 0; i < 2; i++) {
        ll_transport_abort(listed[i + 1]);
        close(sv[i][1]);
    }
    tick(loop);
    CHECK_EQ_INT(ll_loop_close(loop), 0);
    ll_release(loop);
    check_balanced();
    llpy_sink_free(s);
}

/* The builtin write, called as CPython would call a METH_FASTCALL function. */
typedef void *(*fastcall)(void *, void *const *, ptrdiff_t);
struct method_def { const char *name; fastcall meth; int flags; const char *doc; };

static void test_write_builtin(void) {
    setup();
    const struct method_def *def = llpy_write_method();
    CHECK(def != NULL && strcmp(def->name, "transport_write") == 0 && def->flags == 0x80);
    int sv[2];
    CHECK_EQ_INT(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
    ll_loop loop = 0;
    CHECK_EQ_INT(ll_loop_new(&loop), 0);
    ll_transport t = 0;
    CHECK_EQ_INT(ll_transport_open(loop, sv[0], LL_STREAM, NULL, NULL, &t), 0);

    obj *id = f_long_from_u64(t), *data = f_bytes_from("hello", 5), *bad = f_long_from_u64(0xdead);
    void *args[2] = {id, data};
    obj *r = def->meth(NULL, args, 2);
    CHECK(r != NULL && r->id == 0);
    f_decref(r);
    args[0] = bad;
    r = def->meth(NULL, args, 2);
    CHECK(r != NULL && (long long)r->id == LL_EBADHANDLE);
    f_decref(r);
    r = def->meth(NULL, args, 1);
    CHECK(r != NULL && (long long)r->id == LL_EINVAL);
    f_decref(r);
    args[0] = id;
    args[1] = bad; /* not bytes: the C API's error, no write */
    CHECK(def->meth(NULL, args, 2) == NULL && error_set);
    error_set = 0;
    args[0] = data; /* not an int */
    CHECK(def->meth(NULL, args, 2) == NULL && error_set);
    error_set = 0;
    CHECK_EQ_INT(ll_loop_run_once(loop, LL_RUN_NOWAIT), 0);
    char buf[16] = {0};
    CHECK_EQ_INT(read(sv[1], buf, sizeof buf), 5);
    CHECK_EQ_STR(buf, "hello");
    CHECK_EQ_INT(ll_transport_abort(t), 0);
    args[0] = id;
    args[1] = data;
    r = def->meth(NULL, args, 2);
    CHECK(r != NULL);
    if (r != NULL) {
        CHECK_EQ_INT((long long)r->id, LL_ECLOSED);
        f_decref(r);
    }
    f_decref(id);
    f_decref(data);
    f_decref(bad);
    CHECK_EQ_INT(ll_loop_run_once(loop, LL_RUN_NOWAIT), 0);
    CHECK_EQ_INT(ll_loop_close(loop), 0);
    ll_release(loop);
    close(sv[1]);
    check_balanced();
}

int main(void) {
    RUN_TEST(test_bind_checks);
    RUN_TEST(test_routing_in_order);
    RUN_TEST(test_no_data_no_gil);
    RUN_TEST(test_errors);
    RUN_TEST(test_withheld_in_a_real_delivery);
    RUN_TEST(test_write_builtin);
    return CHECK_REPORT();
}
