/* SPDX-License-Identifier: MIT */
/* The C side of the Python binding's hot path (include/libloop/python.h):
 * a loop's event sink that calls data_received itself and a builtin
 * write(). CPython's C API is reached only through the function table the
 * binding hands over from ctypes.pythonapi (ll_py_bind): no Python.h, no
 * link to libpython, and the library stays usable without Python.
 *
 * What it saves, per DATA event (bench/python/README.md): the ctypes
 * callback's entry and argument conversion, the Python sink's frame and its
 * per-event bytecode (unpack, lookups, Context.run); per write: ctypes'
 * argument conversion and libffi's call. Only layout-free calls are used
 * (no PyObject field is read here), so any CPython build with these
 * functions works. */
#include <stdlib.h>
#include <string.h>

#include "capi.h"
#include "pyapi.h"

#define api ll__py_api
#define bound ll__py_bound
py_api ll__py_api;
int ll__py_bound;

struct ll_py_sink {
    PyObj *fast;     /* {transport id: (context, protocol, transport)} */
    PyObj *name;     /* the protocol method: "data_received" */
    PyObj *on_error; /* on_error(transport, exc) */
    ll_event_batch_fn other;
    void *other_arg;
};

int ll_py_bind(void *const *fns, size_t n) {
    if (fns == NULL || n != LL_PY_API_COUNT)
        return LL_EINVAL;
    for (size_t i = 0; i < n; i++)
        if (fns[i] == NULL)
            return LL_EINVAL;
    if (bound)
        return memcmp(&api, fns, sizeof api) == 0 ? 0 : LL_EINVAL;
    memcpy(&api, fns, sizeof api);
    bound = 1;
    return 0;
}

int ll_py_sink_new(void *fast, void *name, void *on_error, ll_event_batch_fn other,
                   void *other_arg, ll_py_sink **out) {
    if (out == NULL)
        return LL_EINVAL;
    *out = NULL;
    if (!bound || fast == NULL || name == NULL || on_error == NULL || other == NULL)
        return LL_EINVAL;
    ll_py_sink *s = malloc(sizeof *s);
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

void ll_py_sink_free(ll_py_sink *sink) { free(sink); }

/* The (context, protocol, transport) entry of a DATA event's transport, a
 * new reference, or NULL (not listed: the event goes to other). A lookup
 * error (a key's __eq__ cannot fail for ints, but the dict is the binding's)
 * is reported as unraisable and the event goes to other. */
static PyObj *fast_entry(const ll_py_sink *s, const ll_event *ev) {
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

PyObj *ll__py_pass_exception(PyObj *fn, PyObj *const *lead, size_t n) {
    PyObj *type = NULL, *value = NULL, *tb = NULL;
    api.err_fetch(&type, &value, &tb);
    api.err_normalize(&type, &value, &tb);
    if (value != NULL && tb != NULL)
        api.set_traceback(value, tb);
    PyObj *r = NULL;
    if (value != NULL && n < 3) {
        PyObj *args[3];
        for (size_t i = 0; i < n; i++)
            args[i] = lead[i];
        args[n] = value;
        r = api.call(fn, args, n + 1, NULL);
    }
    if (type != NULL)
        api.decref(type);
    if (value != NULL)
        api.decref(value);
    if (tb != NULL)
        api.decref(tb);
    return r;
}

/* data_received raised (or the context could not be entered): hand the
 * exception to on_error(transport, exc); what on_error raises is
 * unraisable. Leaves no exception set. */
static void report(const ll_py_sink *s, PyObj *transport) {
    PyObj *r = ll__py_pass_exception(s->on_error, &transport, 1);
    if (r != NULL)
        api.decref(r);
    else if (api.err_occurred() != NULL)
        api.write_unraisable(s->on_error);
}

/* protocol.<name>(bytes) inside context, for one event. */
static void deliver_data(const ll_py_sink *s, PyObj *entry, const ll_event *ev) {
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
static PyObj *taken(const ll_py_sink *s, const ll_event *ev, gil_once *gil) {
    if (ev->kind != LL_DATA_RECEIVED)
        return NULL;
    if (!gil->held) {
        gil->state = api.gil_ensure();
        gil->held = 1;
    }
    return fast_entry(s, ev);
}

/* Whether ev's transport may not get read events now. */
static int held_now(const ll_event *ev) {
    const ll__proto *p = ll__delivering_slot(ev->transport);
    return p != NULL && ((volatile const ll__proto *)p)->held != 0;
}

/* ev withheld now (kind 0) because an earlier event of this delivery
 * paused, closed or aborted its transport (cloop.h, ll__withhold). */
static int withheld(ll_event *ev) {
    return ll__is_read_event(ev->kind) && ll__withhold(ev, ll__delivering_slot(ev->transport));
}

void ll_py_sink_deliver(ll_loop loop, ll_event *events, size_t n, void *arg) {
    const ll_py_sink *s = arg;
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
         * withheld now. The binding's sink withholds what its own calls
         * stop (it sets kind 0). */
        size_t j = i + 1;
        while (j < n && !(ll__is_read_event(events[j].kind) && held_now(&events[j])) &&
               (entry = taken(s, &events[j], &gil)) == NULL)
            j++;
        if (entry != NULL)
            api.decref(entry);
        s->other(loop, &events[i], j - i, s->other_arg);
        i = j;
    }
    if (gil.held)
        api.gil_release(gil.state);
}

/* write(id, data): ll_transport_write_async_packed for a bytes object. */
static PyObj *py_write(PyObj *self, PyObj *const *args, ptrdiff_t nargs) {
    (void)self;
    if (nargs != 2)
        return api.long_from_i64(LL_EINVAL);
    unsigned long long t = api.long_as_u64(args[0]);
    if (t == (unsigned long long)-1 && api.err_occurred() != NULL)
        return NULL;
    char *buf;
    ptrdiff_t len;
    if (api.bytes_as(args[1], &buf, &len) < 0)
        return NULL;
    return api.long_from_i64(ll_transport_write_async_packed(t, buf, (size_t)len));
}

static const py_method_def write_def = {
    "transport_write", py_write, METH_FASTCALL,
    "transport_write(id, data): ll_transport_write_async_packed's result"};

const void *ll_py_write_method(void) { return bound ? &write_def : NULL; }
