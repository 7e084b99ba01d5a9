# SPDX-License-Identifier: MIT
"""The loop's network plumbing: the batch sink that receives every transport
event, and the transport factories asyncio's high-level methods call.

create_connection, create_server, create_unix_*, connect_accepted_socket
and sendfile are asyncio's own methods (base_events.BaseEventLoop,
unix_events._UnixSelectorEventLoop), taken by reference, not copied: their
argument handling, happy eyeballs, error messages and Server object are
asyncio's, and they build transports through the factories below, which
hand the fd to libloop. So the loop behaves as asyncio's does and the bytes
move through libloop's C transports. start_tls is written here, step for
step as asyncio's, to give the upgraded connection ssl_protocol.py's
SSLProtocol as ssl= connections get (asyncio's builds its own class).
"""

import io
import os
import ssl
from asyncio import base_events, exceptions, unix_events

from . import _hotpath, _lib
from . import _netlib as _net
from ._lib import check
from . import stream_transport
from .stream_transport import StreamTransport
from .ssl_protocol import new_ssl_protocol
from .tls_config import TLSConfig
from .transports import event_dispatch

_Base = base_events.BaseEventLoop
_DATA = _net.DATA_RECEIVED
_Event = _net.Event
_SIZE = _net.EVENT_SIZE
_transport_write = _hotpath.transport_write
_MEM = _net.MEM
# kind, transport, data, len of the event at an address; where there is no
# MEM (a 32-bit process) kind 0 sends every event down the ctypes path.
_head = _net.event_head if _MEM is not None else (lambda _mem, _at: (0, 0, 0, 0))
_Unix = unix_events._UnixSelectorEventLoop


def _flush_one(loop, t):
    """Send what t gathered (the end-of-trampoline flush's step for one
    transport; the C flush's for a list of bytes or another class)."""
    pend = t._wpend
    if pend is None:
        return  # sent early (close, a big write) or lost meanwhile
    t._wpend = None
    if type(pend) is not bytes:
        pend = b''.join(pend)
    try:
        r = _transport_write(t._tid, pend)  # (t._send(pend), inline)
        if r:
            t._written(r)
        else:
            t._cbuf = 0
    except BaseException as exc:
        _flush_failed(loop, t, exc)


def _flush_failed(loop, t, exc):
    """A flushed write raised: the loop stops with SystemExit and
    KeyboardInterrupt once the round ends, anything else goes to the
    exception handler; the flush goes on with the next transport."""
    if isinstance(exc, (SystemExit, KeyboardInterrupt)):
        loop._stash(exc)
    else:
        loop.call_exception_handler({
            'message': 'Fatal error on transport: write failed',
            'exception': exc, 'transport': t, 'protocol': t._protocol})


class NetworkMixin:
    """Transport events and factories of libloop.EventLoop."""

    def _init_network(self):
        self._transports = {}  # C transport id -> transport object
        # The C sink's list (cpython/sink.c): id -> (context,
        # protocol, transport) of the transports whose data it hands to
        # protocol.data_received itself; kept by _CTransport.set_protocol
        # and _connection_lost. Mutated, never rebound: the C sink holds a
        # borrowed pointer to this dict until _free_sink.
        self._fast = {}
        self._io_open = False  # _io_sync
        # Write gathering (stream_transport.py): on while a trampoline that
        # runs protocol and task code runs; the transports holding
        # gathered bytes.
        self._gather = False
        self._wq = []
        # StreamTransport.write, is_closing and get_extra_info in C
        # (cpython/stream.c), for the process's transports, once a loop
        # (their slots) exists; this loop's _flush_writes too.
        _hotpath.bind_stream(self, StreamTransport, stream_transport.PY, _flush_one,
                             _flush_failed)
        self._c_events = _net.EVENT_BATCH(self._on_events)
        # The C sink takes the listed transports' data and hands the rest
        # to _on_events; without the C side, _on_events takes everything.
        self._c_sink = _hotpath.new_sink(self._fast, _data_error, self._c_events)
        if self._c_sink is not None:
            check(_net.ll_loop_set_event_batch(self._id, _hotpath.DELIVER, self._c_sink),
                  'll_loop_set_event_batch')
        else:
            check(_net.ll_loop_set_event_batch(self._id, self._c_events, None),
                  'll_loop_set_event_batch')
        self._init_servers()

    def _on_events(self, _loop_id, addr, n):
        """The batch sink: every transport event of this loop, n structs at
        addr (EVENT_BATCH: its C arg, always NULL here, is not converted).
        Data for a transport whose protocol takes bytes (the hot path) is
        read with one unpack and one slice of _MEM, with no ctypes struct;
        every other event goes through event_dispatch.

        Writes made here are not gathered: they go at once, as asyncio's
        do, and C sends them without entering Go (the write fast path in
        capi/cloop/send.c, as it does the trampoline's flush). Gathering them cost ~195 ns more per echoed event
        (the flush) than it saved; a protocol that writes twice per
        data_received makes two sends here, as on asyncio. Writes from
        tasks and call_soon callbacks (the host-queue trampoline: aiohttp's
        headers + body) are still gathered."""
        self._gather = False
        try:
            get = self._transports.get
            mem = _MEM
            at = addr - _SIZE
            while n:  # (a countdown: ~45 ns less per batch than a range)
                n -= 1
                at += _SIZE
                kind, tid, data, length = _head(mem, at)
                if kind == _DATA:
                    t = get(tid)
                    if t is not None and t._fast_data and not (t._paused or t._closing):
                        # What _data_bytes does, one Python frame less
                        # per event: data_received straight under the
                        # transport's context (a try costs nothing
                        # until it catches, Python 3.11+); the error
                        # goes to _fatal_error in that context too.
                        try:
                            t._context.run(t._protocol.data_received,
                                           mem[data:data + length])
                        except (SystemExit, KeyboardInterrupt):
                            raise
                        except BaseException as exc:
                            t._context.run(t._data_failed, exc)
                        continue
                ev = _Event.from_address(at)
                t = get(ev.transport)
                if t is None:
                    if ev.kind == _net.CONNECTION_MADE and ev.arg:
                        t = self._accepted(ev.transport, ev.arg)
                    if t is None:
                        continue
                if t._context.run(event_dispatch, t, ev):
                    ev.result = 1
        except (SystemExit, KeyboardInterrupt) as exc:
            self._stash(exc)
        except BaseException as exc:  # a bug of ours: never into ctypes
            self.call_exception_handler({
                'message': 'libloop: error while delivering transport events',
                'exception': exc})
        self._gather = False
        if self._wq:
            self._flush_writes()

    def _flush_writes(self):
        """The end of a trampoline: send every transport's gathered bytes
        (one call each), in the order the transports first wrote. (In C
        when the C side is on: cpython/stream.c's flush, bound over this
        method on the loop, with _flush_one and _flush_failed for what it
        does not do itself.)"""
        wq = self._wq
        self._gather = False
        for t in wq:
            if t._wpend is not None:
                _flush_one(self, t)
        wq.clear()

    def _free_sink(self):
        """close(), after libloop's loop is closed: no event comes any more."""
        _hotpath.free_sink(self._c_sink)
        self._c_sink = None

    def _ensure_fd_no_transport(self, fd):
        """asyncio refuses add_reader on an fd a transport owns; libloop
        refuses too (-EBUSY), this gives asyncio's message first."""
        fileno = fd if isinstance(fd, int) else fd.fileno()
        for t in self._transports.values():
            if getattr(t, '_fileno', None) == fileno:
                raise RuntimeError(f'File descriptor {fd!r} is used by transport {t!r}')

    # ---- factories asyncio's methods call ------------------------------------------

    def _open_transport(self, fd, kind):
        out = _net.u64()
        check(_net.ll_transport_open(self._id, fd, kind, None, None, out), 'transport')
        return out.value

    def _make_socket_transport(self, sock, protocol, waiter=None, *, extra=None, server=None):
        tid = self._open_transport(sock.fileno(), _net.STREAM)
        t = StreamTransport(self, tid, protocol, extra, server, sock)
        if waiter is not None:
            t._waiter = waiter
            t._hold_reading()
        return t

    def _make_ssl_transport(self, rawsock, protocol, sslcontext, waiter=None, *,
                            server_side=False, server_hostname=None, extra=None,
                            server=None, ssl_handshake_timeout=None,
                            ssl_shutdown_timeout=None, call_connection_made=True):
        if isinstance(sslcontext, TLSConfig):  # (a server's is taken by _start_serving)
            rawsock.close()
            raise TypeError('libloop.TLSConfig serves create_server() and create_unix_server() '
                            'only; use an ssl.SSLContext here')
        ssl_protocol = new_ssl_protocol(
            self, protocol, sslcontext, waiter, server_side, server_hostname,
            ssl_handshake_timeout=ssl_handshake_timeout,
            ssl_shutdown_timeout=ssl_shutdown_timeout,
            call_connection_made=call_connection_made)
        self._make_socket_transport(rawsock, ssl_protocol, extra=extra, server=server)
        return ssl_protocol._app_transport

    def _io_sync(self):
        # One flag for the trampoline's per-round check (scheduling.py,
        # _run_ready): a transport or listener is open, so a round stands
        # for an iteration only if libloop's poll would find nothing. Kept
        # at every change of _transports and _serving (a callback chain: ~13 ns less per
        # round than reading the two dicts of the instance __dict__).
        self._io_open = bool(self._transports or self._serving)

    def _close_transports(self):
        """close(): abort what is still open (libloop closes the fds)."""
        for t in list(self._transports.values()):
            t._lost = True  # (not _closing: an unclosed one still warns)
            t._release_socket()
        self._transports.clear()
        self._fast.clear()
        self._io_sync()
        for t in self._wq:  # (only an interrupted trampoline leaves any)
            t._wpend = None
        self._wq.clear()

    # ---- asyncio's own high-level methods -----------------------------------------------

    create_connection = _Base.create_connection
    _connect_sock = _Base._connect_sock
    _create_connection_transport = _Base._create_connection_transport
    _ensure_resolved = _Base._ensure_resolved
    create_server = _Base.create_server
    _create_server_getaddrinfo = _Base._create_server_getaddrinfo
    connect_accepted_socket = _Base.connect_accepted_socket

    async def start_tls(self, transport, protocol, sslcontext, *, server_side=False,
                        server_hostname=None, ssl_handshake_timeout=None,
                        ssl_shutdown_timeout=None):
        """asyncio's start_tls (the same checks, order and cleanup) with
        ssl_protocol.py's SSLProtocol, as ssl= connections get: asyncpg,
        for one, upgrades its connections this way."""
        if not isinstance(sslcontext, ssl.SSLContext):
            raise TypeError(f'sslcontext is expected to be an instance of ssl.SSLContext, '
                            f'got {sslcontext!r}')
        if not getattr(transport, '_start_tls_compatible', False):
            raise TypeError(f'transport {transport!r} is not supported by start_tls()')
        waiter = self.create_future()
        tls = new_ssl_protocol(self, protocol, sslcontext, waiter, server_side, server_hostname,
                               ssl_handshake_timeout=ssl_handshake_timeout,
                               ssl_shutdown_timeout=ssl_shutdown_timeout,
                               call_connection_made=False)
        # Reading stays paused until the protocol has its transport (no
        # data before connection_made), then resumes one callback later.
        transport.pause_reading()
        transport.set_protocol(tls)
        made = self.call_soon(tls.connection_made, transport)
        resumed = self.call_soon(transport.resume_reading)
        try:
            await waiter
        except BaseException:
            transport.close()
            made.cancel()
            resumed.cancel()
            raise
        return tls._app_transport

    sendfile = _Base.sendfile
    _sendfile_fallback = _Base._sendfile_fallback
    create_unix_connection = _Unix.create_unix_connection
    create_unix_server = _Unix.create_unix_server

    async def _sendfile_native(self, transp, file, offset, count):
        """sendfile(): zero-copy through ll_transport_sendfile (libloop
        sends after what is buffered). asyncio's checks and its rule: a file
        with no fd is SendfileNotAvailableError (sendfile() falls back)."""
        if not isinstance(transp, StreamTransport) or transp._lost:
            raise _sendfile_not_available(f"transport {transp!r} is not supported by sendfile")
        sock = transp._socket()
        if sock is None:
            raise _sendfile_not_available(f"transport {transp!r} has no socket")
        self._check_sendfile_params(sock, file, offset, count)
        try:
            fileno = file.fileno()
            fsize = os.fstat(fileno).st_size
        except (AttributeError, io.UnsupportedOperation, OSError) as err:
            raise _sendfile_not_available("not a regular file") from err
        if not (count or fsize):
            return 0  # empty file
        transp._send_gathered()  # the file goes after what was written

        def seek_past(sent):
            if sent > 0:
                os.lseek(fileno, offset + sent, os.SEEK_SET)

        def failed(code, sent):
            # The payload is what went out before the failure: asyncio
            # moves the offset past that too.
            seek_past(sent)
            if code == _lib.LL_ECLOSED:  # the transport was closed meanwhile
                return _closed_during_sendfile()
            return None

        # As asyncio's transport: no reading while the file goes out (the
        # peer's EOF or reset reaches the protocol after it), and write()
        # refuses (its bytes would land inside the file).
        resume_reading = transp.is_reading()
        transp.pause_reading()
        transp._sendfile_started()
        try:
            out = _net.u64()
            rc = _net.ll_transport_sendfile(transp._tid, fileno, offset, count or 0, out)
            if rc == _lib.LL_ECLOSED:
                raise _closed_during_sendfile()
            check(rc, 'sendfile')
            sent = await self._await_c_future(out.value, failed)
        finally:
            transp._sendfile_ended()
            if resume_reading:
                transp.resume_reading()
        seek_past(sent)
        return sent


def _data_error(transport, exc):
    """The C sink's on_error: data_received raised (called inside the
    transport's context, as _on_events calls _data_failed)."""
    if isinstance(exc, (SystemExit, KeyboardInterrupt)):
        transport._loop._stash(exc)
    else:
        transport._data_failed(exc)


def _closed_during_sendfile():
    # (libloop's LL_ECLOSED: the transport ended before the file went out;
    # as a loop error it would read "Event loop is closed")
    return ConnectionError('Connection closed before sendfile finished')


def _sendfile_not_available(msg):
    return exceptions.SendfileNotAvailableError(msg)
