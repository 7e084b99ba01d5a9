/* SPDX-License-Identifier: MIT */
/*
 * libloop/python.h — the C side of a CPython binding's hot path.
 *
 * The Python package (bindings/python, ctypes only) calls these; a C
 * program has no use for them. They let libloop deliver a transport's data
 * to protocol.data_received and take transport.write() without a ctypes
 * crossing per event, as uvloop's compiled loop does:
 *  - the binding hands libloop the addresses of a few functions of
 *    CPython's C API, taken from ctypes.pythonapi (ll_py_bind), so the
 *    library needs no Python headers and no link to libpython;
 *  - a loop's event sink (ll_py_sink_deliver) calls data_received itself
 *    for the transports the binding lists, and hands every other event to
 *    the binding's own ctypes sink, in order;
 *  - a write function (ll_py_write_method) is a CPython builtin that calls
 *    ll_transport_write_async_packed.
 *
 * Python objects are passed and returned as void *: PyObject pointers.
 * Every call here is made holding the GIL, except ll_py_sink_deliver,
 * which libloop calls and which takes the GIL itself.
 */
#ifndef LIBLOOP_PYTHON_H
#define LIBLOOP_PYTHON_H

#include "../libloop.h"

#ifdef __cplusplus
extern "C" {
#endif

/** The CPython functions ll_py_bind takes, by index in its array. */
enum ll_py_api {
    LL_PY_GILSTATE_ENSURE,          /**< PyGILState_Ensure */
    LL_PY_GILSTATE_RELEASE,         /**< PyGILState_Release */
    LL_PY_LONG_FROM_UNSIGNED_LONG_LONG, /**< PyLong_FromUnsignedLongLong */
    LL_PY_LONG_AS_UNSIGNED_LONG_LONG,   /**< PyLong_AsUnsignedLongLong */
    LL_PY_LONG_FROM_LONG_LONG,      /**< PyLong_FromLongLong */
    LL_PY_DICT_GET_ITEM_WITH_ERROR, /**< PyDict_GetItemWithError */
    LL_PY_TUPLE_GET_ITEM,           /**< PyTuple_GetItem */
    LL_PY_BYTES_FROM_STRING_AND_SIZE, /**< PyBytes_FromStringAndSize */
    LL_PY_BYTES_AS_STRING_AND_SIZE, /**< PyBytes_AsStringAndSize */
    LL_PY_CONTEXT_ENTER,            /**< PyContext_Enter */
    LL_PY_CONTEXT_EXIT,             /**< PyContext_Exit */
    LL_PY_OBJECT_VECTORCALL_METHOD, /**< PyObject_VectorcallMethod */
    LL_PY_OBJECT_VECTORCALL,        /**< PyObject_Vectorcall */
    LL_PY_INCREF,                   /**< Py_IncRef */
    LL_PY_DECREF,                   /**< Py_DecRef */
    LL_PY_ERR_FETCH,                /**< PyErr_Fetch */
    LL_PY_ERR_NORMALIZE_EXCEPTION,  /**< PyErr_NormalizeException */
    LL_PY_EXCEPTION_SET_TRACEBACK,  /**< PyException_SetTraceback */
    LL_PY_ERR_OCCURRED,             /**< PyErr_Occurred */
    LL_PY_ERR_WRITE_UNRAISABLE,     /**< PyErr_WriteUnraisable */
    LL_PY_API_COUNT                 /**< how many: ll_py_bind's n */
};

/**
 * Give libloop the CPython functions above (fns[i] is the function named
 * by index i; n must be LL_PY_API_COUNT). Once per process; a second call
 * with the same table is 0, with another LL_EINVAL (a process has one
 * CPython). LL_EINVAL for NULL, a NULL entry or another n.
 */
int ll_py_bind(void *const *fns, size_t n);

/** A loop's Python sink (ll_py_sink_new). */
typedef struct ll_py_sink ll_py_sink;

/**
 * A sink for ll_loop_set_event_batch(loop, ll_py_sink_deliver, sink).
 * An LL_DATA_RECEIVED event of a transport whose id (a Python int) is a key
 * of the dict fast, mapped to a tuple (context, protocol, transport), is
 * delivered as protocol.<name>(bytes) inside context (PyContext_Enter); if
 * that raises, on_error(transport, exception) is called, still inside the
 * context. Every other event goes to other(loop, events, n, other_arg), a
 * run of consecutive ones in one call. fast, name and on_error are
 * borrowed: the caller keeps them alive until ll_py_sink_free (the
 * binding's loop owns them and frees the sink when it closes). LL_EINVAL
 * for a NULL argument or before ll_py_bind; LL_ENOMEM.
 */
int ll_py_sink_new(void *fast, void *name, void *on_error, ll_event_batch_fn other,
                   void *other_arg, ll_py_sink **out);

/** The sink's ll_event_batch_fn (arg: the ll_py_sink). Takes the GIL. */
void ll_py_sink_deliver(ll_loop loop, ll_event *events, size_t n, void *arg);

/** Free a sink made by ll_py_sink_new (after the loop stopped using it). */
void ll_py_sink_free(ll_py_sink *sink);

/**
 * The PyMethodDef of a builtin write(id, data): ll_transport_write_async_packed
 * (id, data, len(data)) for a transport id (int) and a bytes object; returns
 * its result as an int (or raises TypeError/OverflowError for other
 * arguments; LL_EINVAL if not given exactly two). Make the function with
 * PyCFunction_NewEx(ll_py_write_method(), NULL, NULL). NULL before ll_py_bind.
 */
const void *ll_py_write_method(void);

/** The slots of the binding's Handle class ll_py_soon_bind is told about. */
enum ll_py_handle_slot {
    LL_PY_HANDLE_CONTEXT, LL_PY_HANDLE_LOOP, LL_PY_HANDLE_CALLBACK, LL_PY_HANDLE_ARGS,
    LL_PY_HANDLE_CANCELLED, LL_PY_HANDLE_REPR, LL_PY_HANDLE_SOURCE_TRACEBACK,
    LL_PY_HANDLE_SLOTS
};

/** The slots of the binding's loop class ll_py_soon_bind is told about. */
enum ll_py_loop_slot {
    LL_PY_LOOP_SOON_SLOW,   /**< False when call_soon may take the fast path */
    LL_PY_LOOP_SIGNALLED,   /**< True when libloop knows the ready queue has work */
    LL_PY_LOOP_READY_APPEND, /**< the ready deque's bound append */
    LL_PY_LOOP_READY_POPLEFT, /**< the ready deque's bound popleft */
    LL_PY_LOOP_SLOTS
};

/** What call_soon and the handle round in C need to know (ll_py_soon_bind). */
typedef struct ll_py_soon_layout {
    void *handle_type;   /**< the Handle class the handles are made of */
    void *fallback;      /**< the Python call_soon(loop, callback, *args, context=None) */
    void *signal_name;   /**< "_signal": loop method to call when not signalled */
    void *context_name;  /**< "context", interned */
    void *false_, *true_, *none; /**< False, True, None */
    void *alloc;         /**< PyType_GenericAlloc */
    void *tuple_new;     /**< PyTuple_New */
    void *tuple_set;     /**< PyTuple_SetItem */
    void *tuple_size;    /**< PyTuple_Size */
    void *context_copy;  /**< PyContext_CopyCurrent */
    void *callable;      /**< PyCallable_Check */
    void *no_memory;     /**< PyErr_NoMemory */
    void *str_equals;    /**< PyUnicode_CompareWithASCIIString */
    void *exc_matches;   /**< PyErr_ExceptionMatches */
    void *call_object;   /**< PyObject_Call */
    void *report;        /**< report(loop, handle, exc): a callback's error */
    void *exit_types;    /**< (SystemExit, KeyboardInterrupt): raised, not reported */
    /** Byte offsets of the object pointers of those slots in a Handle and
     * in a loop (the binding finds them with a marker it writes through
     * each slot): each pointer-aligned, past the object header, distinct. */
    ptrdiff_t handle_slot[LL_PY_HANDLE_SLOTS];
    ptrdiff_t handle_size; /**< the Handle class's __basicsize__ */
    ptrdiff_t loop_slot[LL_PY_LOOP_SLOTS];
    ptrdiff_t loop_size;   /**< the loop class's __basicsize__ */
} ll_py_soon_layout;

/**
 * Make ll_py_soon_method usable: copies layout (its objects are borrowed:
 * the binding keeps them for the process). After ll_py_bind; once per
 * process (again with an equal layout: 0). LL_EINVAL for NULL, a NULL
 * entry, an offset that is negative, unaligned, inside the object header
 * or past the size, two equal offsets, or before ll_py_bind.
 */
int ll_py_soon_bind(const ll_py_soon_layout *layout);

/**
 * The PyMethodDef of call_soon(callback, *args, context=None) for one loop:
 * make it with PyCFunction_NewEx(ll_py_soon_method(), loop, NULL) and bind
 * it on the loop. It builds the Handle in C (its slots stored at the
 * layout's offsets), appends it with the loop's ready_append and calls
 * loop._signal() when the loop is not signalled; whatever is not that
 * case (debug or closed, another keyword, no callback, a callback that is
 * not callable) goes to the Python fallback, unchanged. NULL before
 * ll_py_soon_bind.
 */
const void *ll_py_soon_method(void);

/**
 * The PyMethodDef of run_handles(n) for one loop (PyCFunction_NewEx(
 * ll_py_run_method(), loop, NULL)): pops n handles from the loop's ready
 * deque and runs each that is not cancelled as asyncio's Handle._run does,
 * callback(*args) inside the handle's context; an exception goes to
 * report(loop, handle, exc), except SystemExit and KeyboardInterrupt, which
 * are raised at once (the handles not popped stay queued). Returns how
 * many were cancelled. NULL before ll_py_soon_bind.
 */
const void *ll_py_run_method(void);

#ifdef __cplusplus
}
#endif

#endif /* LIBLOOP_PYTHON_H */
