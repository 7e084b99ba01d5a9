/* SPDX-License-Identifier: MIT */
/* The Python binding's event sink in C (llpy_sink_deliver, llpy.h): it
 * calls protocol.data_received itself for the transports the binding
 * lists and hands every other event to the binding's ctypes sink, in
 * order. CPython's C API is reached only through the function table the
 * binding hands over from ctypes.pythonapi (llpy_bind): no Python.h, no
 * link to libpython.
 *
 * What it saves, per DATA event (bench/python/README.md): the ctypes
 * callback's entry and argument conversion, the Python sink's frame and its
 * per-event bytecode (unpack, lookups, Context.run). Only layout-free calls
 * are used (no PyObject field is read here), so any CPython build with these
 * functions works. */
#include <stdlib.h>

#include "llpy.h"

#define api llpy_py

struct llpy_sink {
    PyObj *fast;     /* {transport id: (context, protocol, transport)} */
    PyObj *name;     /* the protocol method: "data_received" */
    PyObj *on_error; /* on_error(transport, exc) */
    ll_event_batch_fn other;
    void *other_arg;
};

int llpy_sink_new(void *fast, void *name, void *on_error, ll_event_batch_fn other,
                   void *other_arg, llpy_sink **out) {
    if (out == NULL)
        return LL_EINVAL;
    *out = NULL;
    if (!llpy_bound || fast == NULL || name == NULL || on_error == NULL || other == NULL)
        return LL_EINVAL;
    llpy_sink *s = malloc(sizeof *s);
    if (s == NULL)
        return LL_ENOMEM;
    s->fast = fast;
    s->name = name;
    s->on_error = on_error;
    s->other = other;
    s->other_arg = other_arg;
    *out = s;
    return 0;
}

void llpy_sink_free(llpy_sink *sink) { free(sink); }

/* The kinds ll_event_withhold may withhold (libloop/transport.h). */
static inline int is_read(int kind) {
    return kind == LL_DATA_RECEIVED || kind == LL_DATAGRAM_RECEIVED || kind == LL_EOF_RECEIVED;
}

/* The (context, protocol, transport) entry of a DATA event's transport, a
 * new reference, or NULL (not listed: the event goes to other). A lookup
 * error (a key's __eq__ cannot fail for ints, but the dict is the binding's)
 * is reported as unraisable and the event goes to other. */
static PyObj *fast_entry(const llpy_sink *s, const ll_event *ev) {
    PyObj *key = api.long_from_u64(ev->transport);
    if (key == NULL) {
        api.write_unraisable(s->fast);
        return NULL;
    }
    /* A borrowed reference, owned at once: data_received may replace or
     * drop the dict's entry. Nothing between the lookup and the incref can
     * run Python code, which the GIL makes safe (the binding turns this
     * path off where there is no GIL). */
    PyObj *entry = api.dict_get(s->fast, key);
    if (entry != NULL)
        api.incref(entry);
    api.decref(key);
    if (entry == NULL && api.err_occurred() != NULL)
        api.write_unraisable(s->fast);
    return entry;
}

/* data_received raised (or the context could not be entered): hand the
 * exception to on_error(transport, exc); what on_error raises is
 * unraisable. Leaves no exception set. */
static void report(const llpy_sink *s, PyObj *transport) {
    PyObj *r = llpy_pass_exception(s->on_error, &transport, 1);
    if (r != NULL)
        api.decref(r);
    else if (api.err_occurred() != NULL)
        api.write_unraisable(s->on_error);
}

/* protocol.<name>(bytes) inside context, for one event. */
static void deliver_data(const llpy_sink *s, PyObj *entry, const ll_event *ev) {
    PyObj *ctx = api.tuple_get(entry, 0);
    PyObj *protocol = api.tuple_get(entry, 1);
    PyObj *transport = api.tuple_get(entry, 2);
    if (ctx == NULL || protocol == NULL || transport == NULL) {
        api.write_unraisable(s->fast); /* not a 3-tuple: the binding's bug */
        return;
    }
    PyObj *data = api.bytes_from((const char *)ev->data, (ptrdiff_t)ev->len);
    if (data == NULL) { /* MemoryError: to on_error, as data_received's own would go
                         * (outside the context: no C API call is made while an
                         * exception is set, and entering is one) */
        report(s, transport);
        return;
    }
    if (api.ctx_enter(ctx) < 0) { /* entered already (a nested delivery) */
        report(s, transport);
        api.decref(data);
        return;
    }
    PyObj *args[3] = {NULL, protocol, data};
    PyObj *r = api.call_method(s->name, args + 1, 2 | CALL_OFFSET, NULL);
    if (r == NULL)
        report(s, transport);
    else
        api.decref(r);
    api.decref(data);
    if (api.ctx_exit(ctx) < 0)
        api.write_unraisable(ctx);
}

/* The GIL, taken once per batch at its first DATA event: a batch with
 * none (accepts, closes) goes straight to the binding's sink, which takes
 * it itself. */
typedef struct {
    int state; /* PyGILState_Ensure's */
    int held;
} gil_once;

/* ev's entry if this sink takes it (a listed transport's DATA), else NULL. */
static PyObj *taken(const llpy_sink *s, const ll_event *ev, gil_once *gil) {
    if (ev->kind != LL_DATA_RECEIVED)
        return NULL;
    if (!gil->held) {
        gil->state = api.gil_ensure();
        gil->held = 1;
    }
    return fast_entry(s, ev);
}

/* ev withheld (kind 0): an earlier event of this delivery paused, closed
 * or aborted its transport (libloop's ll_event_withhold). The kind is
 * tested here first, so only read events pay the call. */
static int withheld(ll_event *ev) {
    return ev->kind == 0 || (is_read(ev->kind) && llpy_ll.event_withhold(ev) == 1);
}

void llpy_sink_deliver(ll_loop loop, ll_event *events, size_t n, void *arg) {
    const llpy_sink *s = arg;
    if (s == NULL || events == NULL)
        return;
    gil_once gil = {0, 0};
    size_t i = 0;
    while (i < n) {
        if (withheld(&events[i])) {
            i++;
            continue;
        }
        PyObj *entry = taken(s, &events[i], &gil);
        if (entry != NULL) {
            deliver_data(s, entry, &events[i]);
            api.decref(entry);
            i++;
            continue;
        }
        /* A run of events this sink does not take, to the binding's; a
         * listed transport's DATA ends it (and is looked up again then:
         * the run's own events may change the list), and so does an event
         * withheld now (ll_event_withhold marks it at once: it is then
         * skipped, never handed over). The binding's sink withholds what
         * its own calls stop (it sets kind 0). */
        size_t j = i + 1;
        while (j < n && !withheld(&events[j]) && (entry = taken(s, &events[j], &gil)) == NULL)
            j++;
        if (entry != NULL)
            api.decref(entry);
        s->other(loop, &events[i], j - i, s->other_arg);
        i = j;
    }
    if (gil.held)
        api.gil_release(gil.state);
}
