# SPDX-License-Identifier: MIT
"""Stream transports (TCP, Unix sockets) on libloop's C transports:
asyncio's selector_events._SelectorSocketTransport API, with the fd, the
reads, the write buffer and the close owned by libloop.

Writes of one batch are gathered (as uvloop does): inside the loop's
callbacks (the host-queue trampoline, which sets loop._gather; not the
event-batch sink, see NetworkMixin._on_events), a small write to a transport whose C buffer is empty is kept
in _wpend and the loop sends each transport's gathered bytes with one
ll_transport_write_async_packed when the trampoline ends, before libloop
polls again: an HTTP response written as headers + body is one crossing
and one send(), not two. A write that would take the gathered bytes over
_gather_max (at most the high-water mark), a write while the C buffer
holds bytes, and every write outside those callbacks go at once, after
what is gathered. Because gathering happens only while the C buffer is
empty and stays under the high-water mark, asyncio would not pause there
either: pause_writing still runs inside write() exactly when asyncio's
does. close, write_eof, get_write_buffer_size, set_write_buffer_limits and
sendfile send the gathered bytes first; so does abort (it drops the C
buffer, as asyncio drops its own, but asyncio's write would have handed
the gathered bytes to the kernel already).
"""

import ctypes
import socket
import sys
import types
from asyncio import constants, trsock
from asyncio.log import logger

from . import _hotpath, _lib
from . import _netlib as _net
from ._lib import check
from .transports import ReadingMixin, _CTransport

_GATHER_MAX = 64 * 1024  # most bytes one transport gathers in a batch
_CONCAT_MAX = 1024       # gathered bytes joined by concatenation below this
_UNKNOWN = object()      # a name not read yet
# _eof while a native sendfile runs: write() refuses as after write_eof(),
# with asyncio's other message, and its common path still checks one slot.
_SENDFILE = 'sendfile'
_WRITE_REFUSED = {True: 'Cannot call write() after write_eof()',
                  _SENDFILE: 'unable to write; sendfile is in progress'}
_NO_EXTRA = types.MappingProxyType({})
_transport_write = _hotpath.transport_write
_transport_write_buffer = _hotpath.transport_write_buffer
_MEM = _net.MEM  # the address space as a c_char array (None in a 32-bit process)



def _shared(addr):
    """An address with its host string interned: the connections from one
    host share one string instead of holding a copy each."""
    if type(addr) is tuple and addr and type(addr[0]) is str:
        return (sys.intern(addr[0]),) + addr[1:]
    return addr


class StreamTransport(ReadingMixin, _CTransport):
    """A TCP, Unix-socket or other stream transport (selector_events'
    _SelectorSocketTransport, on libloop)."""

    _sendfile_compatible = constants._SendfileMode.TRY_NATIVE
    _DATA_FAILED = 'Fatal error: protocol.data_received() call failed.'  # (asyncio's)
    __slots__ = ('_eof', '_wpend', '_wpend_n', '_cbuf', '_gather_max', '_conn_lost_writes',
                 '_sockname', '_peername', '_xsock')

    def __init__(self, loop, tid, protocol, extra=None, server=None, sock=None,
                 context=None):
        self._wpend = None  # bytes gathered in this batch (see the module doc)
        self._cbuf = 0      # C buffer size after our last write (0: empty)
        self._sockname = self._peername = _UNKNOWN
        self._xsock = None  # get_extra_info('socket'), made when asked
        super().__init__(loop, tid, protocol, extra, server, sock, context)
        if not extra:
            self._extra = _NO_EXTRA  # (no dict per connection: idle connections' memory)
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
        try:
            self._sockname = _shared(sock.getsockname())
        except OSError:
            self._sockname = None
        try:
            self._peername = _shared(sock.getpeername())
        except OSError:
            self._peername = None

    # ---- extra info: names kept in slots, the socket wrapped when asked ---------

    def get_extra_info(self, name, default=None):
        extra = self._extra
        if extra and name in extra:
            return extra[name]
        if name == 'peername' or name == 'sockname':
            value = self._peername if name == 'peername' else self._sockname
            if value is _UNKNOWN:
                sock = self._socket()
                if sock is None:
                    return default
                self._fill_names(sock)
                value = self._peername if name == 'peername' else self._sockname
            return value
        if name == 'socket':
            if self._xsock is None:
                sock = self._socket()
                if sock is None:
                    return default
                self._xsock = trsock.TransportSocket(sock)
            return self._xsock
        return default

    def _release_socket(self):
        """libloop closed the fd: let go of the socket object (its
        TransportSocket stays, as asyncio's does after close)."""
        sock = self._sock
        if sock is not None:
            if self._xsock is None:
                self._xsock = trsock.TransportSocket(sock)
            sock.detach()
            self._sock = None

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

    def _data(self, ev):
        if self._buffered_protocol:
            self._data_buffered(ev)
        else:
            self._data_bytes(_net.data_at(ev))

    def _data_bytes(self, data):
        try:
            self._protocol.data_received(data)
        except (SystemExit, KeyboardInterrupt):
            raise
        except BaseException as exc:
            self._data_failed(exc)

    def _data_failed(self, exc):
        """data_received raised: asyncio's socket transport ends itself."""
        self._fatal_error(exc, self._DATA_FAILED)

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
            view = memoryview(buf)
            if view.format != 'B' or view.ndim != 1:
                view = view.cast('B')
            n = min(len(view), left)
            if _MEM is not None:
                # A slice of the address space into the view: ~3x cheaper
                # than a ctypes array over the view and ctypes.memmove.
                view[:n] = _MEM[src:src + n]
            else:
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
        # One frame on the common path (the sink's writes: nothing gathered,
        # no gathering): _send inlined, the C call a builtin
        # (_hotpath.transport_write: the status and the buffer's size in one
        # result).
        if type(data) is not bytes:
            self._write_other(data)
            return
        if self._eof:
            raise RuntimeError(_WRITE_REFUSED[self._eof])
        if not data:
            return
        if self._lost:
            self._warn_lost_write()
            return
        pend = self._wpend
        if pend is None:
            loop = self._loop
            if loop._gather:
                # The first write of a trampoline's batch (a task's, a
                # call_soon callback's): kept for the loop's flush when the
                # module doc's rules allow, here rather than in
                # _write_gather (one frame less).
                if not self._cbuf and not self._closing and len(data) <= self._gather_max:
                    self._wpend = data
                    self._wpend_n = len(data)
                    loop._wq.append(self)
                    return
            else:
                r = _transport_write(self._tid, data)
                if r:
                    self._written(r)
                else:
                    self._cbuf = 0
                return
        elif type(pend) is bytes:
            # A second small write of the batch (an HTTP body after its
            # headers): joined here by concatenation rather than in a list
            # that _write_gather builds and the flush joins (a frame, a list
            # and a join less: the binding's own cost of such a batch and
            # its flush, 323-330 -> 290-296 ns). Up to _CONCAT_MAX only, so
            # that many tiny writes copy little; past it the list takes over.
            n = self._wpend_n + len(data)
            if (n <= _CONCAT_MAX and n <= self._gather_max and self._loop._gather
                    and not self._cbuf and not self._closing):
                self._wpend = pend + data
                self._wpend_n = n
                return
        self._write_gather(data)

    def _write_other(self, data):
        """write() of anything but bytes (a bytearray or memoryview: asyncpg
        writes its own buffers): asyncio's checks in asyncio's order, then
        the buffer goes at once, read in place (_transport_write_buffer: no
        bytes copy with the C side), after what this transport gathered. It
        is never gathered: gathering would keep a copy (the caller may
        change its buffer after write returns), and these writers make one
        write per message."""
        if not isinstance(data, (bytearray, memoryview)):
            raise TypeError(f'data argument must be a bytes-like object, '
                            f'not {type(data).__name__!r}')
        if self._eof:
            raise RuntimeError(_WRITE_REFUSED[self._eof])
        if not data:
            return
        if self._lost:
            self._warn_lost_write()
            return
        if self._wpend is not None:
            self._send_gathered()
        if type(data) is memoryview and not data.c_contiguous:
            data = bytes(data)  # (the C side reads C-contiguous buffers only)
        r = _transport_write_buffer(self._tid, data)
        if r:
            self._written(r)
        else:
            self._cbuf = 0

    def _write_gather(self, data):
        """write() inside a trampoline (loop._gather) or with bytes gathered:
        gather while the C buffer is empty (the module's doc), else send
        what is gathered and data after it."""
        pend = self._wpend
        if self._loop._gather and not self._cbuf and not self._closing:
            if pend is None:
                if len(data) <= self._gather_max:
                    self._wpend = data
                    self._wpend_n = len(data)
                    self._loop._wq.append(self)
                    return
            else:
                n = self._wpend_n + len(data)
                if n <= self._gather_max:
                    if type(pend) is list:
                        pend.append(data)
                    else:
                        self._wpend = [pend, data]
                    self._wpend_n = n
                    return
        if pend is not None:
            self._wpend = None
            data = b''.join(pend + [data] if type(pend) is list else (pend, data))
        self._send(data)

    def _send(self, data):
        """One ll_transport_write_async_packed: sends at once, buffers what
        the kernel refused; its result says when the buffer went over the
        high-water mark, so pause_writing runs inside write() as in asyncio
        (the event that follows finds the protocol paused). Closing:
        libloop takes the bytes while close() still flushes (as asyncio's
        transport does; sslproto's close_notify comes that way) and refuses
        them (LL_ECLOSED) once the fd is closed."""
        r = _transport_write(self._tid, data)
        if r:
            self._written(r)
        else:
            self._cbuf = 0

    def _written(self, r):
        """A non-zero packed result: the buffer's size (r >> 1) and the
        status (r & 1), or an error code (negative)."""
        if r > 0:
            self._cbuf = r >> 1
            if r & 1:
                self._sent(1)
        else:
            self._cbuf = 0
            self._sent(r)

    def _sent(self, rc):
        """What a write's non-zero result means (_send's and the loop's
        flush's)."""
        if rc == 1:  # over the high-water mark: pause now, as asyncio
            self._pause_writing_event()
        elif rc == _lib.LL_ECLOSED:
            # libloop ended it (an earlier write failed: reset, EPIPE)
            # and its CONNECTION_LOST is on the way: closing now, as
            # asyncio's _force_close, so drain() yields and sees it.
            self._closing = True
            self._warn_lost_write()
        else:
            check(rc, 'write')

    def _send_gathered(self):
        """Send what this batch gathered (the loop's flush; before close,
        write_eof, ...)."""
        pend = self._wpend
        if pend is not None:
            self._wpend = None
            self._send(b''.join(pend) if type(pend) is list else pend)

    def _warn_lost_write(self):
        self._conn_lost_writes = getattr(self, '_conn_lost_writes', 0) + 1
        if self._conn_lost_writes >= constants.LOG_THRESHOLD_FOR_CONNLOST_WRITES:
            logger.warning('socket.send() raised exception.')

    def writelines(self, list_of_data):
        self.write(b''.join(list_of_data))

    def write_eof(self):
        # (during a sendfile the EOF goes after the file: libloop orders it)
        if self._closing or self._eof is True:
            return
        self._send_gathered()
        self._eof = True
        check(_net.ll_transport_write_eof(self._tid), 'write_eof')

    def close(self):
        if not self._closing:
            self._send_gathered()
        super().close()

    def _sendfile_started(self):
        """loop.sendfile's, while the file goes out (network.py)."""
        if not self._eof:
            self._eof = _SENDFILE

    def _sendfile_ended(self):
        if self._eof is _SENDFILE:
            self._eof = False

    def _force_close(self, exc):
        # abort drops the buffer; asyncio's write would already have given
        # the gathered bytes to the kernel, so they go first.
        if self._wpend is not None and not self._lost:
            self._send_gathered()
        super()._force_close(exc)

    def get_write_buffer_size(self):
        self._send_gathered()
        n = super().get_write_buffer_size()
        self._cbuf = n
        return n

    def _set_write_buffer_limits(self, high=None, low=None):
        if self._wpend is not None:
            self._send_gathered()
        super()._set_write_buffer_limits(high, low)
        self._gather_max = min(_GATHER_MAX, self._high_water)

    def _connection_lost(self, code):
        self._wpend = None
        super()._connection_lost(code)

    def can_write_eof(self):
        return True


# The Python write, writelines, is_closing and get_extra_info: what the C ones
# (cpython/stream.c, put on the class by _hotpath.bind_stream at the first
# loop) fall back on, and what stays without the C side.
PY_WRITE = StreamTransport.write
PY_IS_CLOSING = StreamTransport.is_closing
PY_GET_EXTRA_INFO = StreamTransport.get_extra_info
PY_WRITELINES = StreamTransport.writelines
# What bind_stream hands the C side: those fallbacks, the sentinels it
# compares slots with and the concatenation limit the Python write keeps.
PY = types.SimpleNamespace(write=PY_WRITE, get_extra_info=PY_GET_EXTRA_INFO, writelines=PY_WRITELINES,
                           no_extra=_NO_EXTRA, unknown=_UNKNOWN, concat_max=_CONCAT_MAX)
