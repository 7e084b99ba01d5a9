# SPDX-License-Identifier: MIT
"""Stream transports (TCP, Unix sockets) on libloop's C transports:
asyncio's selector_events._SelectorSocketTransport API, with the fd, the
reads, the write buffer and the close owned by libloop.

A write goes straight to ll_transport_write: one ctypes call, which sends
at once and buffers only what the kernel refused; its return value says
when the buffer went over the high-water mark, so pause_writing runs inside
write() as in asyncio (the event that follows finds the protocol paused).
"""

import ctypes
import socket
from asyncio import constants, trsock
from asyncio.log import logger

from . import _lib
from . import _netlib as _net
from ._lib import check
from .transports import ReadingMixin, _CTransport


class StreamTransport(ReadingMixin, _CTransport):
    """A TCP, Unix-socket or other stream transport (selector_events'
    _SelectorSocketTransport, on libloop)."""

    _sendfile_compatible = constants._SendfileMode.TRY_NATIVE

    def __init__(self, loop, tid, protocol, extra=None, server=None, sock=None,
                 context=None):
        super().__init__(loop, tid, protocol, extra, server, sock, context)
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
        if self._lost:
            self._warn_lost_write()
            return
        # Closing: libloop takes the bytes while close() still flushes (as
        # asyncio's transport does; sslproto's close_notify comes that
        # way) and refuses them (LL_ECLOSED) once the fd is closed.
        if type(data) is not bytes:
            data = bytes(data)
        rc = _net.ll_transport_write(self._tid, data, len(data))
        if rc:
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
