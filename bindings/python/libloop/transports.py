"""Stream transports on libloop's C transports (asyncio's Transport API).

libloop owns the fd: it reads, writes, buffers and closes it. Every
transport is opened with a NULL protocol fn, so its events reach Python
through the loop's batch sink: one ctypes callback per batch of events,
however many transports they concern (TransportsMixin._on_events). A write
goes straight to ll_transport_write, which sends at once and buffers only
what the kernel refused: one ctypes call, no Python-side buffer.
"""

import ctypes
import errno
import os
import socket
import warnings
from asyncio import constants, futures, protocols, transports, trsock
from asyncio.log import logger

from . import _lib
from . import _netlib as _net
from ._lib import check

_HIGH, _LOW = 64 * 1024, 16 * 1024


def _lost_exc(code):
    """connection_lost's argument for an LL_CONNECTION_LOST code."""
    if code == 0:
        return None
    if -10000 < code < 0:
        return OSError(-code, os.strerror(-code))  # e.g. ConnectionResetError
    return _lib.LibloopError(code)


class _CTransport(transports._FlowControlMixin, transports.Transport):
    """What every libloop-backed transport shares: its C id, its protocol,
    lifetime and the events common to all kinds."""

    _start_tls_compatible = True

    def __init__(self, loop, tid, protocol, extra=None, server=None, sock=None):
        self._tid = tid
        self._lost = False
        self._closing = False
        super().__init__(extra, loop)  # sets the write-buffer limits: needs _tid
        self._protocol = None
        self._sock = sock          # the host's socket object, if any (shares the fd)
        self._server = server
        self._paused = False       # reading paused by the protocol
        self._fatal_exc = None     # passed to connection_lost after a fatal error
        self._waiter = None
        self._buffered_protocol = False
        self.set_protocol(protocol)
        loop._transports[tid] = self
        if server is not None:
            server._attach()

    def __repr__(self):
        state = 'closed' if self._lost else 'closing' if self._closing else 'open'
        return f'<{self.__class__.__name__} id={self._tid:#x} {state}>'

    def __del__(self, _warn=warnings.warn):
        if not self._lost and not self._closing:
            _warn(f"unclosed transport {self!r}", ResourceWarning, source=self)
            try:
                _net.ll_transport_abort(self._tid)
            except Exception:
                pass

    # ---- the protocol -----------------------------------------------------

    def set_protocol(self, protocol):
        self._protocol = protocol
        self._buffered_protocol = isinstance(protocol, protocols.BufferedProtocol)

    def get_protocol(self):
        return self._protocol

    def _fatal_error(self, exc, message='Fatal error on transport'):
        """asyncio's rule: report (except for plain connection errors), then
        abort; connection_lost gets exc."""
        if not isinstance(exc, OSError):
            self._loop.call_exception_handler({
                'message': message, 'exception': exc,
                'transport': self, 'protocol': self._protocol})
        elif self._loop.get_debug():
            logger.debug("%r: %s", self, message, exc_info=True)
        if not self._lost:
            self._fatal_exc = exc
            self._closing = True
            _net.ll_transport_abort(self._tid)

    # ---- lifetime -----------------------------------------------------------

    def is_closing(self):
        return self._closing

    def close(self):
        if self._closing:
            return
        self._closing = True
        _net.ll_transport_close(self._tid)

    def abort(self):
        if self._lost:
            return
        self._closing = True
        _net.ll_transport_abort(self._tid)

    def _force_close(self, exc):
        """asyncio's name for a fatal close (sslproto calls it)."""
        if self._lost:
            return
        self._fatal_exc = exc
        self._closing = True
        _net.ll_transport_abort(self._tid)

    def get_write_buffer_size(self):
        if self._lost:
            return 0
        out = ctypes.c_size_t()
        if _net.ll_transport_get_write_buffer_size(self._tid, ctypes.byref(out)) != 0:
            return 0
        return out.value

    def _set_write_buffer_limits(self, high=None, low=None):
        super()._set_write_buffer_limits(high, low)  # asyncio's defaults and checks
        if not self._lost:
            # The pause/resume decision is libloop's (it sees the buffer).
            check(_net.ll_transport_set_write_buffer_limits(
                self._tid, self._high_water, self._low_water),
                'set_write_buffer_limits')

    def set_write_buffer_limits(self, high=None, low=None):
        self._set_write_buffer_limits(high=high, low=low)

    # ---- events (called by TransportsMixin._on_events) -------------------------

    def _made(self):
        try:
            self._protocol.connection_made(self)
        except (SystemExit, KeyboardInterrupt):
            raise
        except BaseException as exc:
            self._fatal_error(exc, 'Fatal error: protocol.connection_made() call failed.')
        waiter, self._waiter = self._waiter, None
        if waiter is not None:
            futures._set_result_unless_cancelled(waiter, None)

    def _connection_lost(self, code):
        self._lost = self._closing = True
        exc = self._fatal_exc if self._fatal_exc is not None else _lost_exc(code)
        self._fatal_exc = None
        self._loop._transports.pop(self._tid, None)
        waiter, self._waiter = self._waiter, None
        if waiter is not None and not waiter.done():
            waiter.set_exception(exc or ConnectionError('connection lost before it was made'))
        try:
            if self._protocol is not None:
                self._protocol.connection_lost(exc)
        finally:
            if self._sock is not None:
                self._sock.detach()  # libloop has closed the fd
                self._sock = None
            self._protocol = None
            server, self._server = self._server, None
            if server is not None:
                server._detach()

    def _pause_writing_event(self):
        self._protocol_paused = True  # libloop decided (it sees the buffer)
        try:
            self._protocol.pause_writing()
        except (SystemExit, KeyboardInterrupt):
            raise
        except BaseException as exc:
            self._loop.call_exception_handler({
                'message': 'protocol.pause_writing() failed',
                'exception': exc, 'transport': self, 'protocol': self._protocol})

    def _resume_writing_event(self):
        self._protocol_paused = False
        try:
            self._protocol.resume_writing()
        except (SystemExit, KeyboardInterrupt):
            raise
        except BaseException as exc:
            self._loop.call_exception_handler({
                'message': 'protocol.resume_writing() failed',
                'exception': exc, 'transport': self, 'protocol': self._protocol})


class StreamTransport(_CTransport):
    """A TCP, Unix-socket or other stream transport (selector_events'
    _SelectorSocketTransport, on libloop)."""

    def __init__(self, loop, tid, protocol, extra=None, server=None, sock=None):
        super().__init__(loop, tid, protocol, extra, server, sock)
        self._eof = False
        if sock is not None:
            self._fill_names(sock)

    def _made(self):
        if self._sock is None:  # accepted by libloop: asyncio gives its names
            sock = self._socket()
            if sock is not None:
                self._fill_names(sock)
        super()._made()

    def _fill_names(self, sock):
        """asyncio's transports know their names from the start (and
        after close)."""
        self._extra['socket'] = trsock.TransportSocket(sock)
        try:
            self._extra['sockname'] = sock.getsockname()
        except OSError:
            self._extra['sockname'] = None
        if 'peername' not in self._extra:
            try:
                self._extra['peername'] = sock.getpeername()
            except socket.error:
                self._extra['peername'] = None

    # ---- extra info: computed on demand from the fd -----------------------------

    def get_extra_info(self, name, default=None):
        if name in self._extra:
            return self._extra[name]
        sock = self._socket()
        if sock is None:
            return default
        if name == 'socket':
            self._extra['socket'] = trsock.TransportSocket(sock)
        elif name == 'sockname':
            try:
                self._extra['sockname'] = sock.getsockname()
            except OSError:
                return default
        elif name == 'peername':
            try:
                self._extra['peername'] = sock.getpeername()
            except OSError:
                return default
        else:
            return default
        return self._extra[name]

    def _socket(self):
        """The socket object over the fd (made once, for accepted ones)."""
        if self._sock is None and not self._lost:
            fd = _net.ll_transport_fd(self._tid)
            if fd < 0:
                return None
            try:
                self._sock = socket.socket(fileno=fd)
            except OSError:
                return None
        return self._sock

    # ---- reading ----------------------------------------------------------------

    def is_reading(self):
        return not self._paused and not self._closing

    def pause_reading(self):
        if self._closing or self._paused:
            return
        self._paused = True
        _net.ll_transport_pause_reading(self._tid)
        if self._loop.get_debug():
            logger.debug("%r pauses reading", self)

    def resume_reading(self):
        if self._closing or not self._paused:
            return
        self._paused = False
        _net.ll_transport_resume_reading(self._tid)
        if self._loop.get_debug():
            logger.debug("%r resumes reading", self)

    def _data(self, ev):
        if self._buffered_protocol:
            self._data_buffered(ev)
            return
        try:
            self._protocol.data_received(_net.data_at(ev))
        except (SystemExit, KeyboardInterrupt):
            raise
        except BaseException as exc:
            self._fatal_error(exc, 'Fatal error: protocol.data_received() call failed.')

    def _data_buffered(self, ev):
        """BufferedProtocol: copy into the protocol's buffers, as many
        rounds as the data needs."""
        src, left = ev.data, ev.len
        while left > 0 and not self._lost:
            try:
                buf = self._protocol.get_buffer(left)
                if not len(buf):
                    raise RuntimeError('get_buffer() returned an empty buffer')
            except (SystemExit, KeyboardInterrupt):
                raise
            except BaseException as exc:
                self._fatal_error(exc, 'Fatal error: protocol.get_buffer() call failed.')
                return
            view = memoryview(buf).cast('B')
            n = min(len(view), left)
            ctypes.memmove((ctypes.c_char * n).from_buffer(view), src, n)
            src += n
            left -= n
            try:
                self._protocol.buffer_updated(n)
            except (SystemExit, KeyboardInterrupt):
                raise
            except BaseException as exc:
                self._fatal_error(exc, 'Fatal error: protocol.buffer_updated() call failed.')
                return

    def _eof_received(self):
        """The peer's EOF: 1 keeps the transport open (libloop closes on 0)."""
        if self._loop.get_debug():
            logger.debug("%r received EOF", self)
        try:
            keep_open = self._protocol.eof_received()
        except (SystemExit, KeyboardInterrupt):
            raise
        except BaseException as exc:
            self._fatal_error(exc, 'Fatal error: protocol.eof_received() call failed.')
            return 1
        if not keep_open:
            self._closing = True
        return 1 if keep_open else 0

    # ---- writing -----------------------------------------------------------------

    def write(self, data):
        if not isinstance(data, (bytes, bytearray, memoryview)):
            raise TypeError(f'data argument must be a bytes-like object, '
                            f'not {type(data).__name__!r}')
        if self._eof:
            raise RuntimeError('Cannot call write() after write_eof()')
        if not data:
            return
        if self._closing:
            if self._lost or not self._closing_writes_ok():
                self._warn_lost_write()
                return
        if type(data) is not bytes:
            data = bytes(data)
        rc = _net.ll_transport_write(self._tid, data, len(data))
        if rc < 0 and rc != _lib.LL_ECLOSED:
            check(rc, 'write')

    def _closing_writes_ok(self):
        return False  # asyncio: nothing is written once close() was called

    def _warn_lost_write(self):
        self._conn_lost_writes = getattr(self, '_conn_lost_writes', 0) + 1
        if self._conn_lost_writes >= constants.LOG_THRESHOLD_FOR_CONNLOST_WRITES:
            logger.warning('socket.send() raised exception.')

    def writelines(self, list_of_data):
        self.write(b''.join(list_of_data))

    def write_eof(self):
        if self._closing or self._eof:
            return
        self._eof = True
        check(_net.ll_transport_write_eof(self._tid), 'write_eof')

    def can_write_eof(self):
        return True


def event_dispatch(transport, ev):
    """Route one event to its transport's handler; returns the EOF answer."""
    kind = ev.kind
    if kind == _net.DATA_RECEIVED:
        transport._data(ev)
    elif kind == _net.CONNECTION_MADE:
        transport._made()
    elif kind == _net.EOF_RECEIVED:
        return transport._eof_received()
    elif kind == _net.CONNECTION_LOST:
        transport._connection_lost(ev.code)
    elif kind == _net.PAUSE_WRITING:
        transport._pause_writing_event()
    elif kind == _net.RESUME_WRITING:
        transport._resume_writing_event()
    else:
        transport._other_event(ev)
    return 0


def errno_of(exc):
    """The errno of an exception, or EIO."""
    return getattr(exc, 'errno', None) or errno.EIO
