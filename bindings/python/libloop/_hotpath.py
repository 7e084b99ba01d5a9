# SPDX-License-Identifier: MIT
"""The hot path's C side: the package's own C object, libloop-cpython.so
(bindings/python/cpython, llpy.h), calls protocol.data_received itself,
makes builtins for write() and call_soon and is the host-queue trampoline
(llpy_host_run), with no ctypes crossing per event, per write, per call or
per iteration.

The object needs no Python headers and links neither libpython nor
libloop.so: it gets CPython's C API as function addresses from
ctypes.pythonapi, and libloop's three functions it calls
(ll_transport_write_async_packed, ll_event_withhold, ll_loop_host_ready)
as addresses from the libloop.so this package opened (llpy_bind), once
per process. It is found
like libloop.so (OBJECT_PATHS: beside this package, as a wheel installs it,
then the repository's build/, where `make lib` writes it, then beside the
libloop.so in use) and loaded with it, at the first loop. Where it cannot
be used (missing, of another interface, an interpreter without one of the
functions), or with LIBLOOP_PY_HOTPATH=0 in the environment (A/B
measurements, the tests of the fallback), ENABLED is False: the loop keeps
its ctypes sink (NetworkMixin._on_events) for every event and
transport_write is the declared ctypes call.

The C side is on only where it was proven right (refusal(): OFF_REASON
says why not): CPython with its GIL (the C code holds borrowed references
across calls that only the GIL keeps safe; a free-threaded build without it
takes the Python path), the main interpreter (the object keeps one table of
the C API per process), a version this package was tested on, and, for
call_soon in C, asyncio's Handle with exactly the slots soon.c fills.
"""

import ctypes
import os
import sys
from ctypes import POINTER, c_int, c_size_t, c_uint64, c_void_p, py_object

from . import _lib, _loader
from . import _netlib as _net

# The object's file name: not a Python identifier, so that `import` never
# takes it for an extension module of the package.
OBJECT_NAME = 'libloop-cpython.so'
# llpy.h's LLPY_INTERFACE: the object's functions, tables and struct as this
# file calls them. An object of another interface is not called.
INTERFACE = 6

# llpy_bind's first table, in enum llpy_py_fn's order.
_API = ('PyGILState_Ensure', 'PyGILState_Release', 'PyLong_FromUnsignedLongLong',
        'PyLong_AsUnsignedLongLong', 'PyLong_FromLongLong', 'PyDict_GetItemWithError',
        'PyTuple_GetItem', 'PyBytes_FromStringAndSize', 'PyBytes_AsStringAndSize',
        'PyContext_Enter', 'PyContext_Exit', 'PyObject_VectorcallMethod',
        'PyObject_Vectorcall', 'Py_IncRef', 'Py_DecRef', 'PyErr_Fetch',
        'PyErr_NormalizeException', 'PyException_SetTraceback', 'PyErr_Occurred',
        'PyErr_WriteUnraisable', 'PyObject_GetBuffer', 'PyBuffer_Release', 'PyObject_IsTrue')
PY_API_COUNT = 23  # LLPY_PY_COUNT
assert len(_API) == PY_API_COUNT
# llpy_bind's second table, in enum llpy_ll_fn's order: libloop's functions.
_LL_API = ('ll_transport_write_async_packed', 'll_event_withhold', 'll_loop_host_ready')


def _object_paths():
    """Where the object may be, in order (OBJECT_PATHS)."""
    here = os.path.dirname(os.path.abspath(__file__))
    paths = [os.path.join(here, OBJECT_NAME),
             os.path.normpath(os.path.join(here, '..', '..', '..', 'build', OBJECT_NAME))]
    if os.sep in _loader.PATH:
        paths.append(os.path.join(os.path.dirname(os.path.abspath(_loader.PATH)), OBJECT_NAME))
    return list(dict.fromkeys(paths))


OBJECT_PATHS = _object_paths()
OBJECT_PATH = None   # the object in use, once loaded


def _open_object():
    """(the object, None) or (None, why not)."""
    global OBJECT_PATH
    tried = []
    for path in OBJECT_PATHS:
        if not os.path.isfile(path):
            continue
        try:
            obj = ctypes.PyDLL(path)
            version = obj.llpy_interface
        except (OSError, AttributeError) as exc:
            tried.append(f'{path} ({exc})')
            continue
        version.restype, version.argtypes = c_int, []
        if version() != INTERFACE:
            tried.append(f'{path} (interface {version()}, this package needs {INTERFACE}: '
                         f'rebuild it with `make lib`)')
            continue
        OBJECT_PATH = path
        return obj, None
    return None, (f'no usable {OBJECT_NAME}: ' + ('; '.join(tried) if tried else
                  'not found in ' + ', '.join(OBJECT_PATHS)))


def _declare(obj, name, restype, argtypes):
    fn = getattr(obj, name)
    fn.restype, fn.argtypes = restype, argtypes
    return fn


# The protocol method the sink calls (borrowed by every sink: kept here).
DATA_RECEIVED = sys.intern('data_received')


def _declared_write(tid, data):
    """transport_write without the C side: the declared ctypes call."""
    return _net.ll_transport_write_async_packed(tid, data, len(data))


def _declared_write_buffer(tid, data):
    """transport_write_buffer without the C side: the declared ctypes
    call on a bytes copy (ctypes takes no bytearray or memoryview as a
    char pointer; bytes() also reads a buffer that is not contiguous)."""
    data = bytes(data)
    return _net.ll_transport_write_async_packed(tid, data, len(data))


# The CPython versions the C side was tested on (make test runs the suite
# under each); a later one takes the Python path until tested.
TESTED_VERSIONS = ((3, 11), (3, 12), (3, 13))
# asyncio.Handle's slots, which llpy_soon_method fills in a Handle it makes
# (3.11 to 3.13 alike): another set means a Handle it would half fill.
HANDLE_SLOTS = frozenset(('_callback', '_args', '_cancelled', '_loop', '_source_traceback',
                          '_repr', '__weakref__', '_context'))


def _is_main_interpreter():
    api = ctypes.pythonapi
    try:
        get, main = api.PyInterpreterState_Get, api.PyInterpreterState_Main
    except AttributeError:
        return False
    get.restype = main.restype = c_void_p
    get.argtypes = main.argtypes = []
    return get() == main()


def refusal(handle_slots=None):
    """Why the C side stays off in this process, or None where it may run.
    handle_slots: asyncio.Handle's __slots__, checked for call_soon in C."""
    if os.environ.get('LIBLOOP_PY_HOTPATH', '1') == '0':
        return 'LIBLOOP_PY_HOTPATH=0'
    if sys.implementation.name != 'cpython':
        return f'{sys.implementation.name} is not CPython'
    if not getattr(sys, '_is_gil_enabled', lambda: True)():
        return 'the GIL is disabled (free-threaded build)'
    if sys.version_info[:2] not in TESTED_VERSIONS:
        return f'CPython {sys.version_info[0]}.{sys.version_info[1]} is not a tested version'
    if not _is_main_interpreter():
        return 'not the main interpreter'
    if handle_slots is not None and frozenset(handle_slots) != HANDLE_SLOTS:
        return f'asyncio.Handle has other slots: {sorted(handle_slots)}'
    return None


OFF_REASON = None   # why the sink and write are not in C (set by _init)
SOON_OFF_REASON = None   # why call_soon is not in C (set by _bind_soon)


_object = None   # the loaded object (a PyDLL: its calls keep the GIL)


def _bind():
    """The C side's calls, or None (refused, or an object, library or
    interpreter without them: OFF_REASON says which)."""
    global OFF_REASON, _object
    OFF_REASON = refusal()
    if OFF_REASON is not None:
        return None
    obj, OFF_REASON = _open_object()
    if obj is None:
        return None
    try:
        py = _api_addresses(_API)
        ll = [_loader.address(name) for name in _LL_API]
        calls = (
            _declare(obj, "llpy_bind", c_int, [POINTER(c_void_p), c_size_t,
                                                POINTER(c_void_p), c_size_t]),
            _declare(obj, "llpy_write_method", c_void_p, []),
            _declare(obj, "llpy_write_buffer_method", c_void_p, []),
            _declare(obj, "llpy_sink_new", c_int, [py_object, py_object, py_object,
                                                   _net.EVENT_BATCH, c_void_p, POINTER(c_void_p)]),
            _declare(obj, "llpy_sink_free", None, [c_void_p]),
            _declare(obj, "llpy_sink_deliver", None, [c_uint64, c_void_p, c_size_t, c_void_p]),
            obj.llpy_host_run,
        )
    except AttributeError as exc:
        OFF_REASON = f'missing: {exc}'
        return None
    bind, method, buffer_method = calls[0], calls[1], calls[2]
    if bind((c_void_p * len(py))(*py), len(py), (c_void_p * len(ll))(*ll), len(ll)) != 0:
        OFF_REASON = 'llpy_bind refused the tables'
        return None
    _object = obj
    # one builtin of each for the process
    return (_new_function(method()), _new_function(buffer_method())) + calls[3:]


def _api_addresses(names):
    """The addresses of CPython C-API functions, in names' order (an
    AttributeError names the first one this interpreter lacks)."""
    return [ctypes.cast(getattr(ctypes.pythonapi, name), c_void_p).value for name in names]


def _new_function(method, self=None):
    """PyCFunction_NewEx(method, self, NULL): a builtin, bound to self if
    given (it takes its own reference to self; ctypes takes over the new
    one it returns, freed with the last user)."""
    return _PyCFunction_NewEx(method, None if self is None else id(self), None)


_PyCFunction_NewEx = ctypes.pythonapi.PyCFunction_NewEx
_PyCFunction_NewEx.restype, _PyCFunction_NewEx.argtypes = py_object, [c_void_p, c_void_p, c_void_p]


# Chosen when the library is opened (_init, at the first loop): until then
# the ctypes path, which is also what stays without the C side.
ENABLED = False
# transport_write(tid, data) -> ll_transport_write_async_packed's result.
transport_write = _declared_write
# transport_write_buffer(tid, data) -> the same for any C-contiguous buffer
# (bytearray, memoryview, array.array), read in place.
transport_write_buffer = _declared_write_buffer
DELIVER = None   # llpy_sink_deliver as the loop's batch fn
HOST_RUN = None  # llpy_host_run as the loop's host-queue fn (host_queue_fn)


def _init():
    global ENABLED, transport_write, transport_write_buffer, DELIVER, HOST_RUN, _new, _free
    calls = _bind()
    if calls is None:
        return
    transport_write, transport_write_buffer, _new, _free, deliver, host_run = calls
    DELIVER = _net.EVENT_BATCH(ctypes.cast(deliver, c_void_p).value)
    HOST_RUN = _lib.HOST_RUN(ctypes.cast(host_run, c_void_p).value)
    ENABLED = True
    # network.py and stream_transport.py keep transport_write as a global.
    _loader.replace_in_package(_declared_write, transport_write)
    _loader.replace_in_package(_declared_write_buffer, transport_write_buffer)


def host_queue_fn(host_run):
    """(fn, arg) for ll_loop_set_host_queue that make libloop call a
    loop's round, host_run (the caller keeps it and fn alive while the loop
    is open): llpy_host_run and host_run's address with the C side, which
    calls host_run(); else a ctypes trampoline over it and None, which
    calls host_run(loop_id, None)."""
    if ENABLED:
        return HOST_RUN, id(host_run)
    return _lib.HOST_RUN(host_run), None


_loader.on_load(_init)


class _SoonLayout(ctypes.Structure):
    """struct llpy_soon_layout (llpy.h; tests/abi/structs.py holds them together)."""
    _fields_ = ([(name, c_void_p) for name in (
        'handle_type', 'fallback', 'signal_name', 'context_name', 'false_', 'true_', 'none',
        'alloc', 'tuple_new', 'tuple_set', 'tuple_size', 'context_copy', 'callable',
        'no_memory', 'str_equals', 'exc_matches', 'call_object', 'report', 'exit_types')] +
        [('handle_slot', ctypes.c_ssize_t * 7), ('handle_size', ctypes.c_ssize_t),
         ('loop_slot', ctypes.c_ssize_t * 5), ('loop_size', ctypes.c_ssize_t)])


_HANDLE_SLOTS = ('_context', '_loop', '_callback', '_args', '_cancelled', '_repr',
                 '_source_traceback')       # enum llpy_handle_slot's order
_LOOP_SLOTS = ('_soon_slow', '_signalled', '_ready_append', '_ready_popleft',
               '_id')  # enum llpy_loop_slot's order
_SOON_API = ('PyType_GenericAlloc', 'PyTuple_New', 'PyTuple_SetItem', 'PyTuple_Size',
             'PyContext_CopyCurrent', 'PyCallable_Check', 'PyErr_NoMemory',
             'PyUnicode_CompareWithASCIIString', 'PyErr_ExceptionMatches', 'PyObject_Call')


def _slot_offsets(obj, names):
    """Where each slot keeps its object pointer in obj, found by writing a
    marker through the slot and looking for its address in obj's memory;
    None unless every name is a slot of obj's class found exactly once."""
    cls = type(obj)
    size = cls.__basicsize__
    width = ctypes.sizeof(c_void_p)
    found = []
    for name in names:
        if type(getattr(cls, name, None)).__name__ != 'member_descriptor':
            return None
        missing = object()
        old = getattr(obj, name, missing)
        marker = object()
        setattr(obj, name, marker)
        raw = ctypes.string_at(id(obj), size)
        if old is missing:
            delattr(obj, name)
        else:
            setattr(obj, name, old)
        key = id(marker).to_bytes(width, sys.byteorder)
        hits = [i for i in range(0, size - width + 1, width) if raw[i:i + width] == key]
        if len(hits) != 1:
            return None
        found.append(hits[0])
    return found


_soon = {}   # 'method': llpy_soon_method's address once bound; the layout's objects


def _bind_soon(loop, handle_type, fallback, signal, report):
    """llpy_soon_bind for this loop's class, once; True when bound."""
    global SOON_OFF_REASON
    if 'method' in _soon:
        return _soon['method'] is not None
    _soon['method'] = None
    slots = [name for cls in handle_type.__mro__ for name in cls.__dict__.get('__slots__', ())]
    SOON_OFF_REASON = refusal(slots)
    if SOON_OFF_REASON is not None:
        return False
    try:
        soon_bind = _declare(_object, "llpy_soon_bind", c_int, [POINTER(_SoonLayout)])
        soon_method = _declare(_object, "llpy_soon_method", c_void_p, [])
        run_method = _declare(_object, "llpy_run_method", c_void_p, [])
        fns = _api_addresses(_SOON_API)
    except AttributeError as exc:
        SOON_OFF_REASON = f'missing: {exc}'
        return False
    hoffs = _slot_offsets(object.__new__(handle_type), _HANDLE_SLOTS)
    loffs = _slot_offsets(loop, _LOOP_SLOTS)
    if hoffs is None or loffs is None:
        SOON_OFF_REASON = 'the Handle or loop slots were not found in the objects'
        return False
    keep = (handle_type, fallback, sys.intern(signal), sys.intern('context'), False, True, None)
    ends = (report, (SystemExit, KeyboardInterrupt))
    layout = _SoonLayout(*[id(o) for o in keep], *fns, *[id(o) for o in ends],
                         (ctypes.c_ssize_t * 7)(*hoffs), handle_type.__basicsize__,
                         (ctypes.c_ssize_t * 5)(*loffs), type(loop).__basicsize__)
    if soon_bind(ctypes.byref(layout)) != 0:
        SOON_OFF_REASON = 'llpy_soon_bind refused the layout'
        return False
    _soon['keep'] = keep + ends
    _soon['method'] = soon_method()
    _soon['run'] = run_method()
    return True


def loop_methods_for(loop, handle_type, fallback, report, signal='_signal'):
    """(call_soon, run_handles) of loop as builtins (llpy_soon_method and
    llpy_run_method, their self the loop), or None without the C side.
    fallback is the Python call_soon function (called as fallback(loop,
    callback, *args, context=...)) for all but the plain case; report(loop,
    handle, exc) takes a callback's error; signal names the loop method to
    call when libloop does not know the ready queue has work."""
    global SOON_OFF_REASON
    if not ENABLED:
        SOON_OFF_REASON = OFF_REASON
        return None
    if not _bind_soon(loop, handle_type, fallback, signal, report):
        return None
    return _new_function(_soon['method'], loop), _new_function(_soon['run'], loop)


class _HostLayout(ctypes.Structure):
    """struct llpy_host_layout (llpy.h; tests/abi/structs.py holds them together)."""
    _fields_ = ([(name, c_void_p) for name in (
        'host_run_name', 'run_ready_name', 'flush_name', 'sig_watch_name', 'stash',
        'false_', 'true_', 'none', 'one', 'size', 'inplace_add', 'inplace_sub',
        'long_as_i64')] +
        [('loop_slot', ctypes.c_ssize_t * 11), ('loop_size', ctypes.c_ssize_t)])


_HOST_LOOP_SLOTS = ('_signalled', '_awake', '_gather', '_debug', '_run_handles', '_n_callbacks',
                    '_ready', '_wq', '_sig_on', '_sig_fd', '_io_open')   # enum llpy_host_loop_slot's order
_HOST_API = ('PyObject_Size', 'PyNumber_InPlaceAdd', 'PyNumber_InPlaceSubtract',
             'PyLong_AsLongLong')
HOST_OFF_REASON = None   # why the loop's round is not in C (set by host_round_for)
_host = {}   # 'method': llpy_host_round_method's address once bound; 'keep': the layout's objects


def _stash_for_c(loop, exc):
    """The round in C's `except BaseException as exc: loop._stash(exc)`."""
    loop._stash(exc)


def host_round_for(loop):
    """The loop's host-queue round as a builtin (llpy_host_round_method, its
    self the loop: _host_run's common case in C, the rest loop._host_run()),
    or None without the C side (HOST_OFF_REASON says why). Needs the round
    of handles in C (loop_methods_for) for its common case."""
    global HOST_OFF_REASON
    if 'method' not in _host:
        _host['method'] = None
        if not ENABLED:
            HOST_OFF_REASON = OFF_REASON
            return None
        try:
            bind = _declare(_object, "llpy_host_bind", c_int, [POINTER(_HostLayout)])
            method = _declare(_object, "llpy_host_round_method", c_void_p, [])
            fns = _api_addresses(_HOST_API)
        except AttributeError as exc:
            HOST_OFF_REASON = f'missing: {exc}'
            return None
        offs = _slot_offsets(loop, _HOST_LOOP_SLOTS)
        if offs is None:
            HOST_OFF_REASON = 'the loop slots were not found in the object'
            return None
        keep = tuple(sys.intern(n) for n in ('_host_run', '_run_ready', '_flush_writes',
                                             '_sig_watch'))
        keep += (_stash_for_c, False, True, None, 1)
        layout = _HostLayout(*[id(o) for o in keep], *fns,
                             (ctypes.c_ssize_t * 11)(*offs), type(loop).__basicsize__)
        if bind(ctypes.byref(layout)) != 0:
            HOST_OFF_REASON = 'llpy_host_bind refused the layout'
            return None
        _host['keep'] = keep
        _host['method'] = method()
    if _host['method'] is None:
        return None
    return _new_function(_host['method'], loop)


def new_sink(fast, on_error, other):
    """A C sink (its address) over the dict fast ({id: (context, protocol,
    transport)}), calling on_error(transport, exc) when data_received
    raises and other (the ctypes sink) for every other event; None without
    the C side. The caller keeps fast, on_error and other alive until
    free_sink."""
    if not ENABLED:
        return None
    out = c_void_p()
    rc = _new(fast, DATA_RECEIVED, on_error, other, None, ctypes.byref(out))
    return out.value if rc == 0 else None


def free_sink(sink):
    """Free a sink from new_sink once its loop is closed."""
    if sink is not None:
        _free(sink)


class _StreamLayout(ctypes.Structure):
    """struct llpy_stream_layout (llpy.h; tests/abi/structs.py holds them together)."""
    _fields_ = ([(name, c_void_p) for name in (
        'transport_type', 'loop_type', 'fallback', 'written_name', 'bytes_type',
        'bytearray_type', 'memoryview_type', 'false_', 'true_', 'none', 'zero',
        'list_append', 'err_clear', 'tuple_size', 'no_memory', 'list_type', 'list_size',
        'list_get', 'list_set_slice', 'flush_one', 'flush_failed', 'extra_fallback', 'no_extra',
        'unknown', 'str_type', 'str_equals', 'writelines_fallback')] +
        [('concat_max', ctypes.c_ssize_t),
         ('slot', ctypes.c_ssize_t * 12), ('size', ctypes.c_ssize_t),
         ('loop_slot', ctypes.c_ssize_t * 2), ('loop_size', ctypes.c_ssize_t)])


_STREAM_SLOTS = ('_tid', '_loop', '_eof', '_lost', '_closing', '_wpend', '_wpend_n', '_cbuf',
                 '_gather_max', '_extra', '_peername', '_sockname')   # enum llpy_stream_slot's order
_STREAM_LOOP_SLOTS = ('_gather', '_wq')   # enum llpy_stream_loop_slot's order
_STREAM_API = ('PyList_Append', 'PyErr_Clear', 'PyTuple_Size', 'PyErr_NoMemory')
_STREAM_LIST_API = ('PyList_Size', 'PyList_GetItem', 'PyList_SetSlice')
_STREAM_STR_API = ('PyUnicode_CompareWithASCIIString',)
STREAM_OFF_REASON = None   # why StreamTransport.write is not in C (set by bind_stream)
_stream = {}   # 'done': bind_stream ran; 'keep': the layout's objects


def bind_stream(loop, transport_type, py, flush_one, flush_failed):
    """Put transport_type.write, writelines, is_closing and get_extra_info
    in C (stream.c), once per process, for transports of loops of loop's
    class: method descriptors on the class, whose fallbacks are py's (the
    module's StreamPython: the Python write, writelines and get_extra_info, the
    _extra and names' sentinels, the concatenation limit); then loop's
    _flush_writes in C, bound on loop (flush_one(loop, t) and
    flush_failed(loop, t, exc) its Python parts). True when they are
    there; STREAM_OFF_REASON says why not."""
    if _stream_bind(loop, transport_type, py, flush_one, flush_failed):
        loop._flush_writes = _new_function(_stream['flush'], loop)
        return True
    return False


def _stream_bind(loop, transport_type, py, flush_one, flush_failed):
    global STREAM_OFF_REASON
    if 'done' in _stream:
        return _stream['done']
    _stream['done'] = False
    if not ENABLED:
        STREAM_OFF_REASON = OFF_REASON
        return False
    try:
        bind = _declare(_object, "llpy_stream_bind", c_int, [POINTER(_StreamLayout)])
        write_method = _declare(_object, "llpy_stream_write_method", c_void_p, [])
        closing_method = _declare(_object, "llpy_stream_is_closing_method", c_void_p, [])
        flush_method = _declare(_object, "llpy_stream_flush_method", c_void_p, [])
        extra_method = _declare(_object, "llpy_stream_extra_info_method", c_void_p, [])
        lines_method = _declare(_object, "llpy_stream_writelines_method", c_void_p, [])
        fns = _api_addresses(_STREAM_API)
        list_fns = _api_addresses(_STREAM_LIST_API)
        str_fns = _api_addresses(_STREAM_STR_API)
        new_descr = ctypes.pythonapi.PyDescr_NewMethod
    except AttributeError as exc:
        STREAM_OFF_REASON = f'missing: {exc}'
        return False
    new_descr.restype, new_descr.argtypes = py_object, [py_object, c_void_p]
    probe = object.__new__(transport_type)
    toffs = _slot_offsets(probe, _STREAM_SLOTS)
    probe._closing = True  # (its __del__ then takes it for closed: no warning, no abort)
    loffs = _slot_offsets(loop, _STREAM_LOOP_SLOTS)
    if toffs is None or loffs is None:
        STREAM_OFF_REASON = 'the transport or loop slots were not found in the objects'
        return False
    keep = (transport_type, type(loop), py.write, sys.intern('_written'), bytes, bytearray,
            memoryview, False, True, None, 0)
    extra = (py.get_extra_info, py.no_extra, py.unknown, str)
    layout = _StreamLayout(*[id(o) for o in keep], *fns, id(list), *list_fns,
                           id(flush_one), id(flush_failed), *[id(o) for o in extra], *str_fns,
                           id(py.writelines), py.concat_max,
                           (ctypes.c_ssize_t * 12)(*toffs), transport_type.__basicsize__,
                           (ctypes.c_ssize_t * 2)(*loffs), type(loop).__basicsize__)
    if bind(ctypes.byref(layout)) != 0:
        STREAM_OFF_REASON = 'llpy_stream_bind refused the layout'
        return False
    _stream['keep'] = keep + extra + (flush_one, flush_failed, py.writelines)
    _stream['flush'] = flush_method()
    transport_type.write = new_descr(transport_type, write_method())
    transport_type.is_closing = new_descr(transport_type, closing_method())
    transport_type.get_extra_info = new_descr(transport_type, extra_method())
    transport_type.writelines = new_descr(transport_type, lines_method())
    _stream['done'] = True
    return True
