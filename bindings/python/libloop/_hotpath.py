# SPDX-License-Identifier: MIT
"""The hot path's C side (include/libloop/python.h, capi/pyhot.c): libloop
calls protocol.data_received itself and writes through a builtin, with no
ctypes crossing per event or per write.

The package stays ctypes only: libloop gets CPython's C API as function
addresses from ctypes.pythonapi (ll_py_bind), once per process. Where that
cannot be done (a library without these calls, an interpreter without one
of the functions), or with LIBLOOP_PY_HOTPATH=0 in the environment (A/B
measurements, the tests of the fallback), ENABLED is False: the loop keeps
its ctypes sink (NetworkMixin._on_events) for every event and
transport_write is the declared ctypes call.
"""

import ctypes
import os
import sys
from ctypes import POINTER, c_int, c_size_t, c_uint64, c_void_p, py_object

from . import _netlib as _net
from ._lib import PYLIB, _fn

# ll_py_bind's table, in enum ll_py_api's order.
_API = ('PyGILState_Ensure', 'PyGILState_Release', 'PyLong_FromUnsignedLongLong',
        'PyLong_AsUnsignedLongLong', 'PyLong_FromLongLong', 'PyDict_GetItemWithError',
        'PyTuple_GetItem', 'PyBytes_FromStringAndSize', 'PyBytes_AsStringAndSize',
        'PyContext_Enter', 'PyContext_Exit', 'PyObject_VectorcallMethod',
        'PyObject_Vectorcall', 'Py_IncRef', 'Py_DecRef', 'PyErr_Fetch',
        'PyErr_NormalizeException', 'PyException_SetTraceback', 'PyErr_Occurred',
        'PyErr_WriteUnraisable')
PY_API_COUNT = 20  # LL_PY_API_COUNT
assert len(_API) == PY_API_COUNT

# The protocol method the sink calls (borrowed by every sink: kept here).
DATA_RECEIVED = sys.intern('data_received')


def _declared_write(tid, data, _write=_net.ll_transport_write_async_packed):
    """transport_write without the C side: the declared ctypes call."""
    return _write(tid, data, len(data))


def _declare():
    """The C side's calls, or None (a library or interpreter without them)."""
    if os.environ.get('LIBLOOP_PY_HOTPATH', '1') == '0':
        return None
    try:
        fns = [ctypes.cast(getattr(ctypes.pythonapi, name), c_void_p).value for name in _API]
        new_function = ctypes.pythonapi.PyCFunction_NewEx
        calls = (
            _fn(PYLIB, "ll_py_bind", c_int, [POINTER(c_void_p), c_size_t]),
            _fn(PYLIB, "ll_py_write_method", c_void_p, []),
            _fn(PYLIB, "ll_py_sink_new", c_int, [py_object, py_object, py_object,
                                                 _net.EVENT_BATCH, c_void_p, POINTER(c_void_p)]),
            _fn(PYLIB, "ll_py_sink_free", None, [c_void_p]),
            _fn(PYLIB, "ll_py_sink_deliver", None, [c_uint64, c_void_p, c_size_t, c_void_p]),
        )
    except AttributeError:
        return None
    bind, method = calls[0], calls[1]
    if bind((c_void_p * len(fns))(*fns), len(fns)) != 0:
        return None
    # A new reference, to which ctypes adds one: the function lives as long
    # as the process (one object).
    new_function.restype, new_function.argtypes = py_object, [c_void_p, c_void_p, c_void_p]
    return (new_function(method(), None, None),) + calls[2:]


_calls = _declare()
ENABLED = _calls is not None

# transport_write(tid, data) -> ll_transport_write_async_packed's result.
transport_write = _calls[0] if ENABLED else _declared_write

if ENABLED:
    _, _new, _free, _deliver = _calls
    # ll_py_sink_deliver as the loop's batch fn.
    DELIVER = _net.EVENT_BATCH(ctypes.cast(_deliver, c_void_p).value)


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
