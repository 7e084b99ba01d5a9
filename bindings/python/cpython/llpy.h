/* SPDX-License-Identifier: MIT */
/*
 * llpy.h — the C side of the Python binding's hot path, libloop-cpython.so
 * (private to bindings/python: its one user is libloop/_hotpath.py, which
 * loads it with ctypes; nothing here is libloop's API).
 *
 * It lets the binding deliver a transport's data to protocol.data_received,
 * take transport.write() and loop.call_soon without a ctypes crossing per
 * event, write or call, as uvloop's compiled loop does:
 *  - the binding hands over the addresses of the CPython C-API functions
 *    below, taken from ctypes.pythonapi, and of the libloop functions
 *    the object calls, taken from the libloop.so it loaded (llpy_bind). So
 *    the object needs no Python headers, no link to libpython and no link
 *    to libloop.so: it is built with -z defs and needs only libc;
 *  - a loop's event sink (llpy_sink_deliver, sink.c) calls data_received
 *    itself for the transports the binding lists, and hands every other
 *    event to the binding's own ctypes sink, in order;
 *  - the host-queue trampoline (host.c) calls the loop's Python round
 *    with no ctypes callback;
 *  - builtins: write() (write.c) calls ll_transport_write_async_packed;
 *    call_soon (soon.c) builds asyncio's Handle in C; run_handles
 *    (handles.c) runs a round of them.
 *
 * Why a table of libloop's addresses rather than a link to libloop.so by
 * its soname: the package chooses its library by path ($LIBLOOP_LIBRARY,
 * its own directory, the repository's build/, then an installed one) and
 * checks its version first; a DT_NEEDED of libloop.so.0 would be matched
 * against that library only when it is already loaded, and would otherwise
 * make the dynamic linker search for some libloop.so.0 of its own. The
 * table names exactly the library the package opened, whatever its file
 * name, and a call through it costs what a call through the PLT does.
 *
 * Python objects are void * (PyObject pointers, never looked into except
 * the binding's own Handle and loop slots, soon.c). Every call here is made
 * holding the GIL, except llpy_sink_deliver, which libloop calls and which
 * takes the GIL itself. Error codes are libloop's (LL_EINVAL, LL_ENOMEM).
 */
#ifndef LIBLOOP_PY_LLPY_H
#define LIBLOOP_PY_LLPY_H

#include <stddef.h>
#include <stdint.h>

#include "libloop.h" /* types and constants only: its functions come in llpy_bind's table */

/* What the binding may call (the object is built -fvisibility=hidden). */
#define LLPY_EXPORT __attribute__((visibility("default")))

/* The interface of this object to _hotpath.py: bumped whenever a function,
 * table or struct below changes, so that a stale object is refused (the
 * binding then takes its Python path) rather than called wrongly. */
#define LLPY_INTERFACE 6

/** The CPython functions llpy_bind takes, by index in its first array. */
enum llpy_py_fn {
    LLPY_GILSTATE_ENSURE,          /**< PyGILState_Ensure */
    LLPY_GILSTATE_RELEASE,         /**< PyGILState_Release */
    LLPY_LONG_FROM_UNSIGNED_LONG_LONG, /**< PyLong_FromUnsignedLongLong */
    LLPY_LONG_AS_UNSIGNED_LONG_LONG,   /**< PyLong_AsUnsignedLongLong */
    LLPY_LONG_FROM_LONG_LONG,      /**< PyLong_FromLongLong */
    LLPY_DICT_GET_ITEM_WITH_ERROR, /**< PyDict_GetItemWithError */
    LLPY_TUPLE_GET_ITEM,           /**< PyTuple_GetItem */
    LLPY_BYTES_FROM_STRING_AND_SIZE, /**< PyBytes_FromStringAndSize */
    LLPY_BYTES_AS_STRING_AND_SIZE, /**< PyBytes_AsStringAndSize */
    LLPY_CONTEXT_ENTER,            /**< PyContext_Enter */
    LLPY_CONTEXT_EXIT,             /**< PyContext_Exit */
    LLPY_OBJECT_VECTORCALL_METHOD, /**< PyObject_VectorcallMethod */
    LLPY_OBJECT_VECTORCALL,        /**< PyObject_Vectorcall */
    LLPY_INCREF,                   /**< Py_IncRef */
    LLPY_DECREF,                   /**< Py_DecRef */
    LLPY_ERR_FETCH,                /**< PyErr_Fetch */
    LLPY_ERR_NORMALIZE_EXCEPTION,  /**< PyErr_NormalizeException */
    LLPY_EXCEPTION_SET_TRACEBACK,  /**< PyException_SetTraceback */
    LLPY_ERR_OCCURRED,             /**< PyErr_Occurred */
    LLPY_ERR_WRITE_UNRAISABLE,     /**< PyErr_WriteUnraisable */
    LLPY_OBJECT_GET_BUFFER,        /**< PyObject_GetBuffer (write.c) */
    LLPY_BUFFER_RELEASE,           /**< PyBuffer_Release (write.c) */
    LLPY_OBJECT_IS_TRUE,           /**< PyObject_IsTrue (host.c) */
    LLPY_PY_COUNT                  /**< how many: llpy_bind's npy */
};

/** The libloop functions llpy_bind takes, by index in its second array. */
enum llpy_ll_fn {
    LLPY_TRANSPORT_WRITE_ASYNC_PACKED, /**< ll_transport_write_async_packed (write.c) */
    LLPY_EVENT_WITHHOLD,               /**< ll_event_withhold (sink.c) */
    LLPY_LOOP_HOST_READY,              /**< ll_loop_host_ready (soon.c) */
    LLPY_LL_COUNT                      /**< how many: llpy_bind's nll */
};

/** LLPY_INTERFACE of this object (checked before anything else is called). */
LLPY_EXPORT int llpy_interface(void);

/**
 * Give the object the CPython functions (py[i] is the function named by
 * index i of enum llpy_py_fn; npy must be LLPY_PY_COUNT) and libloop's
 * (ll[i] by enum llpy_ll_fn; nll must be LLPY_LL_COUNT). Once per process;
 * again with the same tables 0, with others LL_EINVAL (a process has one
 * CPython and the binding one libloop). LL_EINVAL for NULL, a NULL entry
 * or another count.
 */
LLPY_EXPORT int llpy_bind(void *const *py, size_t npy, void *const *ll, size_t nll);

/** A loop's Python sink (llpy_sink_new). */
typedef struct llpy_sink llpy_sink;

/**
 * A sink for ll_loop_set_event_batch(loop, llpy_sink_deliver, sink).
 * An LL_DATA_RECEIVED event of a transport whose id (a Python int) is a key
 * of the dict fast, mapped to a tuple (context, protocol, transport), is
 * delivered as protocol.<name>(bytes) inside context (PyContext_Enter); if
 * that raises, on_error(transport, exception) is called, still inside the
 * context. Every other event goes to other(loop, events, n, other_arg), a
 * run of consecutive ones in one call. fast, name and on_error are
 * borrowed: the caller keeps them alive until llpy_sink_free (the
 * binding's loop owns them and frees the sink when it closes). LL_EINVAL
 * for a NULL argument or before llpy_bind; LL_ENOMEM.
 */
LLPY_EXPORT int llpy_sink_new(void *fast, void *name, void *on_error, ll_event_batch_fn other,
                              void *other_arg, llpy_sink **out);

/** The sink's ll_event_batch_fn (arg: the llpy_sink). Takes the GIL. */
LLPY_EXPORT void llpy_sink_deliver(ll_loop loop, ll_event *events, size_t n, void *arg);

/** Free a sink made by llpy_sink_new (after the loop stopped using it). */
LLPY_EXPORT void llpy_sink_free(llpy_sink *sink);

/**
 * The PyMethodDef of a builtin write(id, data): ll_transport_write_async_packed
 * (id, data, len(data)) for a transport id (int) and a bytes object; returns
 * its result as an int (or raises TypeError/OverflowError for other
 * arguments; LL_EINVAL if not given exactly two). Make the function with
 * PyCFunction_NewEx(llpy_write_method(), NULL, NULL). NULL before llpy_bind.
 */
LLPY_EXPORT const void *llpy_write_method(void);

/**
 * The PyMethodDef of a builtin write_buffer(id, data): as llpy_write_method's
 * for any object with the buffer protocol whose buffer is C-contiguous
 * (bytearray, memoryview, array.array, ...): its bytes are handed to
 * ll_transport_write_async_packed in place (libloop copies what it keeps),
 * with no bytes object made. BufferError for a buffer that is not
 * C-contiguous, TypeError for an object without the protocol. NULL before
 * llpy_bind.
 */
LLPY_EXPORT const void *llpy_write_buffer_method(void);

/**
 * An ll_host_run_fn for ll_loop_set_host_queue(loop, llpy_host_run, fn):
 * takes the GIL and returns whether fn() (a Python callable, borrowed: the
 * binding's loop keeps it until the loop is closed) returned a true value;
 * what fn raises is unraisable (sys.unraisablehook) and counts as 0. The
 * same call as a ctypes trampoline makes, without its argument and result
 * conversions. 0 before llpy_bind or for a NULL fn.
 */
LLPY_EXPORT int llpy_host_run(ll_loop loop, void *fn);

/** The slots of the binding's Handle class llpy_soon_bind is told about. */
enum llpy_handle_slot {
    LLPY_HANDLE_CONTEXT, LLPY_HANDLE_LOOP, LLPY_HANDLE_CALLBACK, LLPY_HANDLE_ARGS,
    LLPY_HANDLE_CANCELLED, LLPY_HANDLE_REPR, LLPY_HANDLE_SOURCE_TRACEBACK,
    LLPY_HANDLE_SLOTS
};

/** The slots of the binding's loop class llpy_soon_bind is told about. */
enum llpy_loop_slot {
    LLPY_LOOP_SOON_SLOW,    /**< False when call_soon may take the fast path */
    LLPY_LOOP_SIGNALLED,    /**< True when libloop knows the ready queue has work */
    LLPY_LOOP_READY_APPEND, /**< the ready deque's bound append */
    LLPY_LOOP_READY_POPLEFT, /**< the ready deque's bound popleft */
    LLPY_LOOP_ID,           /**< libloop's loop id (an int), for ll_loop_host_ready */
    LLPY_LOOP_SLOTS
};

/** What call_soon and the handle round in C need to know (llpy_soon_bind;
 * _hotpath._SoonLayout, which tests/abi/structs.py holds to this). */
typedef struct llpy_soon_layout {
    void *handle_type;   /**< the Handle class the handles are made of */
    void *fallback;      /**< the Python call_soon(loop, callback, *args, context=None) */
    void *signal_name;   /**< "_signal": loop method called when ll_loop_host_ready fails */
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
    ptrdiff_t handle_slot[LLPY_HANDLE_SLOTS];
    ptrdiff_t handle_size; /**< the Handle class's __basicsize__ */
    ptrdiff_t loop_slot[LLPY_LOOP_SLOTS];
    ptrdiff_t loop_size;   /**< the loop class's __basicsize__ */
} llpy_soon_layout;

/**
 * Make llpy_soon_method and llpy_run_method usable: copies layout (its
 * objects are borrowed: the binding keeps them for the process). After
 * llpy_bind; once per process (again with an equal layout: 0). LL_EINVAL
 * for NULL, a NULL entry, an offset that is negative, unaligned, inside the
 * object header or past the size, two equal offsets, or before llpy_bind.
 */
LLPY_EXPORT int llpy_soon_bind(const llpy_soon_layout *layout);

/**
 * The PyMethodDef of call_soon(callback, *args, context=None) for one loop:
 * make it with PyCFunction_NewEx(llpy_soon_method(), loop, NULL) and bind
 * it on the loop. It builds the Handle in C (its slots stored at the
 * layout's offsets), appends it with the loop's ready_append and, when
 * the loop is not signalled, calls ll_loop_host_ready itself and sets the
 * loop's signalled slot to True (loop._signal() in C; the Python method is
 * called instead when ll_loop_host_ready fails); whatever is not that
 * case (debug or closed, another keyword, no callback, a callback that is
 * not callable) goes to the Python fallback, unchanged. NULL before
 * llpy_soon_bind.
 */
LLPY_EXPORT const void *llpy_soon_method(void);

/**
 * The PyMethodDef of run_handles(n) for one loop (PyCFunction_NewEx(
 * llpy_run_method(), loop, NULL)): pops n handles from the loop's ready
 * deque and runs each that is not cancelled as asyncio's Handle._run does,
 * callback(*args) inside the handle's context; an exception goes to
 * report(loop, handle, exc), except SystemExit and KeyboardInterrupt, which
 * are raised at once (the handles not popped stay queued). Returns how
 * many were cancelled. NULL before llpy_soon_bind.
 */
LLPY_EXPORT const void *llpy_run_method(void);

/** The slots of the binding's loop class the round in C (host.c) reads
 * and writes. */
enum llpy_host_loop_slot {
    LLPY_HOST_SIGNALLED,   /**< _signalled: libloop knows the ready queue has work */
    LLPY_HOST_AWAKE,       /**< _awake: thread-safe posts need no wake-up */
    LLPY_HOST_GATHER,      /**< _gather: small writes wait for the end of the batch */
    LLPY_HOST_DEBUG,       /**< _debug: asyncio's debug mode */
    LLPY_HOST_RUN_HANDLES, /**< _run_handles: llpy_run_method's builtin, or None */
    LLPY_HOST_N_CALLBACKS, /**< _n_callbacks: handles run (stats) */
    LLPY_HOST_READY,       /**< _ready: the ready deque */
    LLPY_HOST_WQ,          /**< _wq: transports holding gathered writes */
    LLPY_HOST_SIG_ON,      /**< _sig_on: the signal wake-up socket is watched */
    LLPY_HOST_SIG_FD,      /**< _sig_fd: that socket's fd (an int), or -1 */
    LLPY_HOST_IO_OPEN,     /**< _io_open: a transport or listener is open */
    LLPY_HOST_LOOP_SLOTS
};

/** What the loop's round in C needs (llpy_host_bind; _hotpath._HostLayout,
 * which tests/abi/structs.py holds to this). */
typedef struct llpy_host_layout {
    void *host_run_name;  /**< "_host_run": the Python round, for every case but the common one */
    void *run_ready_name; /**< "_run_ready": the rounds after the first */
    void *flush_name;     /**< "_flush_writes": sends the gathered writes */
    void *sig_watch_name; /**< "_sig_watch": the signal socket's watch toggle */
    void *stash;          /**< stash(loop, exc): loop._stash(exc) */
    void *false_, *true_, *none, *one; /**< False, True, None, 1 */
    void *size;           /**< PyObject_Size */
    void *inplace_add;    /**< PyNumber_InPlaceAdd */
    void *inplace_sub;    /**< PyNumber_InPlaceSubtract */
    void *long_as_i64;    /**< PyLong_AsLongLong */
    /** Byte offsets of the object pointers of those slots in a loop (found
     * as for llpy_soon_layout). */
    ptrdiff_t loop_slot[LLPY_HOST_LOOP_SLOTS];
    ptrdiff_t loop_size;  /**< the loop class's __basicsize__ */
} llpy_host_layout;

/**
 * Make llpy_host_round_method usable: copies layout (its objects borrowed:
 * the binding keeps them for the process). After llpy_bind; once per
 * process (again with an equal layout: 0). LL_EINVAL for NULL, a NULL
 * entry or a bad offset (as llpy_soon_bind), or before llpy_bind.
 */
LLPY_EXPORT int llpy_host_bind(const llpy_host_layout *layout);

/**
 * The PyMethodDef of the loop's host-queue round, host_round(), in C
 * (PyCFunction_NewEx(llpy_host_round_method(), loop, NULL); the fn that
 * llpy_host_run calls): what the binding's Python _host_run does, in the
 * same order, when the loop is not in debug mode and has its round of
 * handles in C (_run_handles); any other loop's call is loop._host_run(),
 * unchanged. Returns True when more handles are queued. NULL before
 * llpy_host_bind.
 */
LLPY_EXPORT const void *llpy_host_round_method(void);

/** The slots of the binding's StreamTransport llpy_stream_bind is told about. */
enum llpy_stream_slot {
    LLPY_STREAM_TID,        /**< _tid: libloop's transport id (an int) */
    LLPY_STREAM_LOOP,       /**< _loop: the binding's loop */
    LLPY_STREAM_EOF,        /**< _eof: False while write() may write */
    LLPY_STREAM_LOST,       /**< _lost: False until the connection is lost */
    LLPY_STREAM_CLOSING,    /**< _closing: what is_closing() returns */
    LLPY_STREAM_WPEND,      /**< _wpend: None, or the bytes gathered in this batch */
    LLPY_STREAM_WPEND_N,    /**< _wpend_n: how many bytes _wpend holds */
    LLPY_STREAM_CBUF,       /**< _cbuf: the C buffer's size after the last write (0: empty) */
    LLPY_STREAM_GATHER_MAX, /**< _gather_max: most bytes a batch gathers */
    LLPY_STREAM_EXTRA,      /**< _extra: the extra-info mapping (no_extra: none given) */
    LLPY_STREAM_PEERNAME,   /**< _peername: get_extra_info('peername') (unknown: not read yet) */
    LLPY_STREAM_SOCKNAME,   /**< _sockname: get_extra_info('sockname') (unknown: not read yet) */
    LLPY_STREAM_SLOTS
};

/** The slots of the binding's loop class the stream write reads. */
enum llpy_stream_loop_slot {
    LLPY_STREAM_LOOP_GATHER, /**< _gather: True inside the host-queue trampoline */
    LLPY_STREAM_LOOP_WQ,     /**< _wq: the list of transports holding gathered bytes */
    LLPY_STREAM_LOOP_SLOTS
};

/** What StreamTransport.write and is_closing in C need to know
 * (llpy_stream_bind; _hotpath._StreamLayout, which tests/abi/structs.py
 * holds to this). */
typedef struct llpy_stream_layout {
    void *transport_type; /**< StreamTransport: the descriptors' class */
    void *loop_type;      /**< the binding's loop class (exactly: others take the fallback) */
    void *fallback;       /**< the Python write(transport, data): every case but the common ones */
    void *written_name;   /**< "_written": the method told a non-zero write result */
    void *bytes_type, *bytearray_type, *memoryview_type; /**< bytes, bytearray, memoryview */
    void *false_, *true_, *none, *zero; /**< False, True, None, 0 */
    void *list_append;    /**< PyList_Append */
    void *err_clear;      /**< PyErr_Clear */
    void *tuple_size;     /**< PyTuple_Size */
    void *no_memory;      /**< PyErr_NoMemory */
    void *list_type;      /**< list */
    void *list_size;      /**< PyList_Size */
    void *list_get;       /**< PyList_GetItem */
    void *list_set_slice; /**< PyList_SetSlice */
    void *flush_one;      /**< flush_one(loop, transport): the Python flush of one transport */
    void *flush_failed;   /**< flush_failed(loop, transport, exc): a flushed write raised */
    void *extra_fallback; /**< the Python get_extra_info(transport, name, default=None) */
    void *no_extra;       /**< the _extra of a transport made without extra info */
    void *unknown;        /**< _peername / _sockname before the names were read */
    void *str_type;       /**< str */
    void *str_equals;     /**< PyUnicode_CompareWithASCIIString */
    void *writelines_fallback; /**< the Python writelines(transport, list_of_data) */
    ptrdiff_t concat_max; /**< gathered bytes joined by concatenation up to this size */
    /** Byte offsets of the object pointers of those slots in a transport
     * and in a loop (found as for llpy_soon_layout). */
    ptrdiff_t slot[LLPY_STREAM_SLOTS];
    ptrdiff_t size;       /**< StreamTransport's __basicsize__ */
    ptrdiff_t loop_slot[LLPY_STREAM_LOOP_SLOTS];
    ptrdiff_t loop_size;  /**< the loop class's __basicsize__ */
} llpy_stream_layout;

/**
 * Make llpy_stream_write_method, llpy_stream_is_closing_method and
 * llpy_stream_extra_info_method usable:
 * copies layout (its objects borrowed: the binding keeps them for the
 * process). After llpy_bind; once per process (again with an equal
 * layout: 0). LL_EINVAL for NULL, a NULL entry or a bad offset (as
 * llpy_soon_bind), or before llpy_bind.
 */
LLPY_EXPORT int llpy_stream_bind(const llpy_stream_layout *layout);

/**
 * The PyMethodDef of StreamTransport.write(data) in C, for a method
 * descriptor (PyDescr_NewMethod(transport_type, def)) set on the class.
 * It does what the Python write does in its common cases, and only
 * those: bytes, bytearray or a C-contiguous memoryview, to a transport
 * not at EOF, not lost and with nothing gathered, either written at once
 * (ll_transport_write_async_packed; a non-zero result goes to
 * transport._written(result), 0 sets _cbuf to 0) or, bytes inside the
 * loop's trampoline (loop._gather) with the C buffer empty, not closing
 * and within _gather_max, kept as the batch's first gathered write
 * (_wpend, _wpend_n, appended to loop._wq); bytes to a transport that
 * holds one gathered bytes object, inside the trampoline, with the C
 * buffer empty, not closing and the two together within concat_max and
 * _gather_max, are joined to it (a new bytes object in _wpend). Everything
 * else (other types, empty data, after write_eof or close, a list
 * gathered, keywords) is the Python fallback's, unchanged. NULL before
 * llpy_stream_bind.
 */
LLPY_EXPORT const void *llpy_stream_write_method(void);

/**
 * The PyMethodDef of the loop's _flush_writes() in C, bound on one loop
 * (PyCFunction_NewEx(llpy_stream_flush_method(), loop, NULL)): the end of
 * a trampoline. Sets loop._gather to False, then for each transport of
 * loop._wq, in order (those appended meanwhile included), with bytes
 * gathered: a StreamTransport (exactly) holding one bytes object has it
 * taken (_wpend = None) and written as write() does (_written(result) or
 * _cbuf = 0); any other is flush_one(loop, transport)'s. An exception of
 * a write goes to flush_failed(loop, transport, exc) and the flush goes
 * on; one of flush_failed or flush_one is raised. Empties loop._wq. NULL
 * before llpy_stream_bind.
 */
LLPY_EXPORT const void *llpy_stream_flush_method(void);

/**
 * The PyMethodDef of StreamTransport.writelines(list_of_data) in C, for a
 * method descriptor as llpy_stream_write_method's: on a StreamTransport
 * (exactly: a subclass may have its own write) given a list of bytes
 * objects, write() in C of their concatenation (the one item itself when
 * there is one), as the Python writelines does; every other case (another
 * transport type or argument, an item that is not bytes, keywords) is the
 * layout's writelines_fallback. redis-py sends each command so
 * (StreamWriter.writelines): one Python frame less a command. NULL before
 * llpy_stream_bind.
 */
LLPY_EXPORT const void *llpy_stream_writelines_method(void);

/** The PyMethodDef of StreamTransport.is_closing() in C (the _closing
 * slot), for a method descriptor as llpy_stream_write_method's. NULL
 * before llpy_stream_bind. */
LLPY_EXPORT const void *llpy_stream_is_closing_method(void);

/**
 * The PyMethodDef of StreamTransport.get_extra_info(name, default=None)
 * in C, for a method descriptor as llpy_stream_write_method's: for a
 * transport made without extra info (_extra is no_extra) and a name of
 * type str, 'peername' and 'sockname' are their slots once read (not
 * unknown), and any name but those and 'socket' is default. Everything
 * else (extra info given, a name not read yet, 'socket', another type,
 * keywords) is extra_fallback's, unchanged. NULL before llpy_stream_bind.
 */
LLPY_EXPORT const void *llpy_stream_extra_info_method(void);

/* ---- inside the object ------------------------------------------------------ */

typedef void PyObj; /* a PyObject, never looked into */

/* CPython's Py_buffer, field for field (part of the stable ABI since 3.11,
 * the same in 3.11 to 3.13): PyObject_GetBuffer fills it, PyBuffer_Release
 * reads it. Only buf and len are read here. */
struct llpy_buffer {
    void *buf;
    PyObj *obj;
    ptrdiff_t len, itemsize;
    int readonly, ndim;
    char *format;
    ptrdiff_t *shape, *strides, *suboffsets;
    void *internal;
};
#define LLPY_PYBUF_SIMPLE 0 /* PyBUF_SIMPLE: C-contiguous bytes, no shape */

/* The C API's signatures (CPython 3.9+; stable since), in enum llpy_py_fn's
 * order. */
typedef struct {
    int (*gil_ensure)(void);
    void (*gil_release)(int);
    PyObj *(*long_from_u64)(unsigned long long);
    unsigned long long (*long_as_u64)(PyObj *);
    PyObj *(*long_from_i64)(long long);
    PyObj *(*dict_get)(PyObj *, PyObj *);
    PyObj *(*tuple_get)(PyObj *, ptrdiff_t);
    PyObj *(*bytes_from)(const char *, ptrdiff_t);
    int (*bytes_as)(PyObj *, char **, ptrdiff_t *);
    int (*ctx_enter)(PyObj *);
    int (*ctx_exit)(PyObj *);
    PyObj *(*call_method)(PyObj *, PyObj *const *, size_t, PyObj *);
    PyObj *(*call)(PyObj *, PyObj *const *, size_t, PyObj *);
    void (*incref)(PyObj *);
    void (*decref)(PyObj *);
    void (*err_fetch)(PyObj **, PyObj **, PyObj **);
    void (*err_normalize)(PyObj **, PyObj **, PyObj **);
    int (*set_traceback)(PyObj *, PyObj *);
    PyObj *(*err_occurred)(void);
    void (*write_unraisable)(PyObj *);
    int (*get_buffer)(PyObj *, struct llpy_buffer *, int);
    void (*buffer_release)(struct llpy_buffer *);
    int (*is_true)(PyObj *);
} llpy_py_api;

_Static_assert(sizeof(llpy_py_api) == LLPY_PY_COUNT * sizeof(void *), "one pointer per llpy_py_fn");

/* libloop's functions, in enum llpy_ll_fn's order (libloop.h's prototypes). */
typedef struct {
    int64_t (*write_async_packed)(ll_transport t, const void *data, size_t len);
    int (*event_withhold)(ll_event *ev);
    int (*host_ready)(ll_loop loop);
} llpy_ll_api;

_Static_assert(sizeof(llpy_ll_api) == LLPY_LL_COUNT * sizeof(void *), "one pointer per llpy_ll_fn");

extern llpy_py_api llpy_py; /* llpy_bind's tables (api.c) */
extern llpy_ll_api llpy_ll;
extern int llpy_bound;      /* llpy_bind took them */

/* Calls fn(*lead, exc) (n < 3) with the exception set now: taken,
 * normalized, its traceback attached. fn's result, or NULL: fn raised (its
 * exception is set) or no exception was set (none is). */
PyObj *llpy_pass_exception(PyObj *fn, PyObj *const *lead, size_t n);

/* PY_VECTORCALL_ARGUMENTS_OFFSET: the callee may use args[-1]. */
#define CALL_OFFSET ((size_t)1 << (8 * sizeof(size_t) - 1))
#define METH_NOARGS 0x0004
#define METH_FASTCALL 0x0080
#define METH_KEYWORDS 0x0002

/* A METH_FASTCALL function (METH_KEYWORDS ones are cast to it, as CPython
 * itself does), and CPython's PyMethodDef (its layout is stable ABI). */
typedef PyObj *(*py_fastcall)(PyObj *, PyObj *const *, ptrdiff_t);
typedef struct {
    const char *name;
    py_fastcall meth;
    int flags;
    const char *doc;
} py_method_def;

/* The soon layout and its functions, shared by soon.c and handles.c. */
typedef struct {
    PyObj *(*alloc)(PyObj *, ptrdiff_t);
    PyObj *(*tuple_new)(ptrdiff_t);
    int (*tuple_set)(PyObj *, ptrdiff_t, PyObj *);
    ptrdiff_t (*tuple_size)(PyObj *);
    PyObj *(*context_copy)(void);
    int (*callable)(PyObj *);
    PyObj *(*no_memory)(void);
    int (*str_equals)(PyObj *, const char *);
    int (*exc_matches)(PyObj *);
    PyObj *(*call_object)(PyObj *, PyObj *, PyObj *);
} llpy_soon_api;

extern llpy_soon_layout llpy_layout; /* llpy_soon_bind's copy (soon.c) */
extern llpy_soon_api llpy_soon_fn;
extern int llpy_soon_bound;

/* An object's type: ob_type, the pointer after the reference count in
 * PyObject's header (the same in 3.11 to 3.13 with the GIL, the only
 * builds the binding turns this object on for). */
#define LLPY_TYPE(obj) (((PyObj **)(obj))[1])

/* Whether the offsets are pointer-aligned, past the object header,
 * inside an object of size bytes and distinct (soon.c). */
int llpy_offsets_ok(const ptrdiff_t *off, int n, ptrdiff_t size);

/* A slot's object pointer at byte offset off of obj. */
#define LLPY_SLOT(obj, off) (*(PyObj **)((char *)(obj) + (off)))

#endif /* LIBLOOP_PY_LLPY_H */
