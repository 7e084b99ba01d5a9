# SPDX-License-Identifier: MIT
"""libloop's C transports as asyncio Transports: the base every kind shares.

libloop owns the fd: it reads, writes, buffers and closes it. Every
transport is opened with a NULL protocol fn, so its events reach Python
through the loop's batch sink: one ctypes callback per batch of events,
however many transports they concern (NetworkMixin._on_events). Stream
transports are in stream_transport.py.
"""

import contextvars
import ctypes
import errno
import os
import warnings
from asyncio import events, futures, protocols, transports
from asyncio.log import logger

from . import _lib, _versions
from . import _netlib as _net
from ._lib import check
from .ssl_protocol import takes_bytes

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
    # Slots, not a __dict__: an idle connection's transport costs ~150 B
    # less per idle connection. Subclasses without __slots__ (pipes, datagrams) get a dict.
    __slots__ = ('_tid', '_lost', '_lost_scheduled', '_closing', '_context', '_protocol',
                 '_sock', '_server', '_paused', '_fatal_exc', '_waiter',
                 '_buffered_protocol', '_fast_data', '__weakref__')

    def __init__(self, loop, tid, protocol, extra=None, server=None, sock=None,
                 context=None):
        self._tid = tid
        self._lost = False
        self._lost_scheduled = False
        self._closing = False
        # asyncio runs protocol callbacks in (a copy of) the context of the
        # code that made the transport; so do we (Context.run per event).
        self._context = contextvars.copy_context() if context is None else context
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
        loop._io_sync()
        if server is not None:
            _versions.server_attach(server, self)

    def __repr__(self):
        state = 'closed' if self._lost else 'closing' if self._closing else 'open'
        return f'<{self.__class__.__name__} id={self._tid:#x} {state}>'

    def __del__(self, _warn=warnings.warn):
        if not self._closing:  # neither closed by the host nor lost
            _warn(f"unclosed transport {self!r}", ResourceWarning, source=self)
            if not self._lost:  # (the loop's close() let go of the fd)
                try:
                    _net.ll_transport_abort(self._tid)
                except Exception:
                    pass

    # ---- the protocol -----------------------------------------------------

    def set_protocol(self, protocol):
        self._protocol = protocol
        self._buffered_protocol = (isinstance(protocol, protocols.BufferedProtocol)
                                   and not takes_bytes(protocol))
        # The batch sink hands data to protocol.data_received itself (bytes,
        # no ctypes struct; as _data_bytes would, with _DATA_FAILED as the
        # error's message) when the transport has a _data_bytes and the
        # protocol takes bytes: the C sink, for the transports listed in
        # loop._fast (network.py), else _on_events.
        self._fast_data = not self._buffered_protocol and hasattr(self, '_data_bytes')
        if self._fast_data and not self._lost:
            self._loop._fast[self._tid] = (self._context, protocol, self)
        else:
            self._loop._fast.pop(self._tid, None)

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
        self._force_close(exc)

    # ---- lifetime -----------------------------------------------------------

    def is_closing(self):
        return self._closing

    def close(self):
        if self._closing:
            return
        self._closing = True
        _net.ll_transport_close(self._tid)
        if _net.ll_transport_fd(self._tid) == _lib.LL_ECLOSED:
            self._closed_now()  # nothing to flush: closed already

    def abort(self):
        self._force_close(None)

    def _force_close(self, exc):
        """asyncio's name for a fatal close (sslproto calls it)."""
        if self._lost or self._lost_scheduled:
            return
        if exc is not None:
            self._fatal_exc = exc
        self._closing = True
        _net.ll_transport_abort(self._tid)
        self._closed_now()

    def _closed_now(self):
        """libloop closed the fd inside this call; its CONNECTION_LOST is
        delivered by a libloop ready callback, which runs after the Python
        callbacks of the next iteration. asyncio's connection_lost is a
        call_soon made here, so it runs before a task woken later (drain()
        after close() relies on it): schedule it so, and the C event finds
        the transport gone."""
        self._lost_scheduled = True
        self._loop.call_soon(self._connection_lost, 0, context=self._context)

    def get_write_buffer_size(self):
        if self._lost:
            return 0
        out = ctypes.c_size_t()
        if _net.ll_transport_get_write_buffer_size(self._tid, ctypes.byref(out)) != 0:
            return 0
        return out.value

    def _set_write_buffer_limits(self, high=None, low=None):
        super()._set_write_buffer_limits(high, low)  # asyncio's defaults and checks
        if getattr(self, '_protocol', None) is None and (
                self._high_water, self._low_water) == (_HIGH, _LOW):
            return  # __init__ with the defaults: libloop has them already
        if not self._lost:
            # libloop decides pause/resume (it sees the buffer) and tells
            # us by events, later; asyncio pauses at once when the new
            # high-water mark is below the buffer, so check that here.
            check(_net.ll_transport_set_write_buffer_limits(
                self._tid, self._high_water, self._low_water),
                'set_write_buffer_limits')
            if not self._protocol_paused and self.get_write_buffer_size() > self._high_water:
                self._pause_writing_event()

    def set_write_buffer_limits(self, high=None, low=None):
        self._set_write_buffer_limits(high=high, low=low)

    # ---- events (called by TransportsMixin._on_events) -------------------------

    def _report_callback_error(self, exc, callback, *args):
        """asyncio calls connection_made/connection_lost with call_soon: an
        exception goes to the handler as a callback's, nothing else.
        This runs inside the transport's context and 3.12's
        call_exception_handler enters the handle's: the handle gets a copy
        (the same values; the handler's own changes stay in the copy)."""
        handle = events.Handle(callback, args, self._loop, self._context.copy())
        self._loop.call_exception_handler({
            'message': f'Exception in callback {handle!r}',
            'exception': exc, 'handle': handle})

    def _made(self):
        try:
            self._protocol.connection_made(self)
        except (SystemExit, KeyboardInterrupt):
            raise
        except BaseException as exc:
            self._report_callback_error(exc, self._protocol.connection_made, self)
        waiter, self._waiter = self._waiter, None
        if waiter is not None:
            futures._set_result_unless_cancelled(waiter, None)
            self._waiter_told()

    def _waiter_told(self):
        """The waiter of the call that made the transport has its result
        (its done callbacks are scheduled): see ReadingMixin."""

    def _connection_lost(self, code):
        if self._lost:
            return  # the call_soon of _closed_now, or the C event, came first
        self._lost = self._closing = True
        exc = self._fatal_exc if self._fatal_exc is not None else _lost_exc(code)
        self._fatal_exc = None
        self._loop._transports.pop(self._tid, None)
        self._loop._fast.pop(self._tid, None)
        self._loop._io_sync()
        waiter, self._waiter = self._waiter, None
        if waiter is not None and not waiter.done():
            waiter.set_exception(exc or ConnectionError('connection lost before it was made'))
        try:
            if self._protocol is not None:
                self._protocol.connection_lost(exc)
        except (SystemExit, KeyboardInterrupt):
            raise
        except BaseException as err:
            self._report_callback_error(err, self._protocol.connection_lost, exc)
        finally:
            self._release_socket()  # libloop has closed the fd
            self._protocol = None
            server, self._server = self._server, None
            if server is not None:
                _versions.server_detach(server, self)

    def _release_socket(self):
        """libloop closed the fd: detach the host's socket object."""
        if self._sock is not None:
            self._sock.detach()
            self._sock = None

    def _pause_writing_event(self):
        # From an event, or at once from write() (ll_transport_write said
        # "over the mark"): the later event then finds us paused already.
        if self._protocol_paused or self._protocol is None:
            return
        self._protocol_paused = True
        try:
            self._protocol.pause_writing()
        except (SystemExit, KeyboardInterrupt):
            raise
        except BaseException as exc:
            self._loop.call_exception_handler({
                'message': 'protocol.pause_writing() failed',
                'exception': exc, 'transport': self, 'protocol': self._protocol})

    def _resume_writing_event(self):
        if not self._protocol_paused or self._protocol is None:
            return
        self._protocol_paused = False
        try:
            self._protocol.resume_writing()
        except (SystemExit, KeyboardInterrupt):
            raise
        except BaseException as exc:
            self._loop.call_exception_handler({
                'message': 'protocol.resume_writing() failed',
                'exception': exc, 'transport': self, 'protocol': self._protocol})


_READS = (_net.DATA_RECEIVED, _net.EOF_RECEIVED, _net.DATAGRAM_RECEIVED)


def event_dispatch(transport, ev):
    """Route one event to its transport's handler; returns the EOF answer.

    A read event of a transport that an earlier event of the same batch
    paused, closed or aborted is not delivered (asyncio's remove_reader
    cancels the read callback already queued): kind 0 hands it back to
    libloop, which keeps a paused transport's bytes for resume_reading
    (ll_loop_set_event_batch's contract)."""
    kind = ev.kind
    if kind in _READS and (transport._paused or transport._closing):
        ev.kind = 0
        return 0
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


class ReadingMixin:
    """pause_reading / resume_reading / is_reading of the transports that
    read (streams, read pipes): libloop stops and starts watching the fd."""

    __slots__ = ()

    def is_reading(self):
        return not self._paused and not self._closing

    # asyncio's transports start reading only after the waiter of the call
    # that made them (create_connection, connect_accepted_socket,
    # connect_read_pipe) has its result and its done callbacks ran: the
    # coroutine awaiting the call holds the transport before the first
    # data_received (and may use it there). libloop would read at its next
    # poll, before those callbacks: such a transport is opened with reading
    # off in C, and turned on by a call_soon made after the waiter's result,
    # so it comes after them.

    def _hold_reading(self):
        """The factory's, for a transport made for a waiter."""
        _net.ll_transport_pause_reading(self._tid)

    def _waiter_told(self):
        self._loop.call_soon(self._release_reading)

    def _release_reading(self):
        if not self._paused and not self._closing:
            _net.ll_transport_resume_reading(self._tid)

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
