# SPDX-License-Identifier: MIT
"""Pipe transports on libloop's C transports (unix_events'
_UnixReadPipeTransport / _UnixWritePipeTransport, on libloop).

connect_read_pipe / connect_write_pipe are asyncio's own
(base_events.BaseEventLoop), taken by reference; they call the factories
below. libloop takes a dup of the pipe's fd (LL_PIPE_READ / LL_PIPE_WRITE)
and closes it; the pipe object itself is closed after connection_lost, as
asyncio does, so the file object the caller passed never holds a stale fd.
A child process's pipes (subprocess.py) are the same classes over the
transports ll_spawn made, with no pipe object of their own.
"""

import os
import stat
import warnings
from asyncio import base_events, constants, events, transports
from asyncio.log import logger

from . import _lib
from . import _netlib as _net
from ._lib import check
from .handles import report_callback_error
from .transports import ReadingMixin, _CTransport


class _PipeTransport(_CTransport):
    """What both pipe directions share: the pipe object and the fd."""

    def __init__(self, loop, tid, protocol, pipe=None, fileno=None, extra=None):
        super().__init__(loop, tid, protocol, extra)
        self._pipe = pipe
        self._fileno = fileno
        if pipe is not None:
            self._extra['pipe'] = pipe

    def __repr__(self):
        # A loop's close() lets go of the transports nobody closed (_lost
        # without _closing) and leaves their pipe objects open: asyncio's
        # leaves such a transport as it was, and its repr says open.
        if self._closing:
            state = 'closed' if self._lost else 'closing'
        else:
            state = 'open'
        return f'<{self.__class__.__name__} fd={self._fileno} {state}>'

    def __del__(self, _warn=warnings.warn):
        super().__del__(_warn)
        # Never closed, never lost: the caller's pipe object goes with the
        # transport, as asyncio's does.
        pipe = getattr(self, '_pipe', None)
        if pipe is not None:
            self._pipe = None
            pipe.close()

    def get_extra_info(self, name, default=None):
        if name == 'pipe' and 'pipe' not in self._extra and not self._lost:
            # A child's pipe: a file object over libloop's fd (not owning it).
            fd = _net.ll_transport_fd(self._tid)
            if fd >= 0:
                self._extra['pipe'] = open(fd, self._MODE, buffering=0, closefd=False)
        return super().get_extra_info(name, default)

    def _connection_lost(self, code):
        try:
            super()._connection_lost(code)
        finally:
            pipe, self._pipe = self._pipe, None
            if pipe is not None:
                pipe.close()   # ours is a dup libloop has closed; this is the caller's

    def _fatal_error(self, exc, message='Fatal error on pipe transport'):
        super()._fatal_error(exc, message)


class ReadPipeTransport(ReadingMixin, _PipeTransport, transports.ReadTransport):
    """The read end of a pipe, a socket or a character device (a pty)."""

    _MODE = 'rb'
    _DATA_FAILED = 'Fatal read error on pipe transport'  # (asyncio's)

    def _data(self, ev):
        self._data_bytes(_net.data_at(ev))

    def _data_bytes(self, data):
        try:
            self._protocol.data_received(data)
        except (SystemExit, KeyboardInterrupt):
            raise
        except BaseException as exc:
            self._data_failed(exc)

    def _data_failed(self, exc):
        """data_received raised. asyncio's read pipe calls it from its
        _read_ready handle and does not catch: the error reaches the
        exception handler as that callback's, and the pipe stays open."""
        report_callback_error(self._loop, events.Handle(self._data_bytes, (), self._loop), exc)

    def _eof_received(self):
        # asyncio: EOF on a read pipe calls eof_received, then closes
        # (its answer does not matter: there is nothing to write).
        if self._loop.get_debug():
            logger.info("%r was closed by peer", self)
        self._closing = True
        try:
            self._protocol.eof_received()
        except (SystemExit, KeyboardInterrupt):
            raise
        except BaseException as exc:
            self._fatal_error(exc, 'Fatal error: protocol.eof_received() call failed.')
        return 0

    def _connection_lost(self, code):
        if code == -5:   # EIO: a pty whose other side closed (asyncio logs it in debug only)
            self._fatal_exc = OSError(5, os.strerror(5))
        super()._connection_lost(code)


class WritePipeTransport(_PipeTransport, transports.WriteTransport):
    """The write end of a pipe, a socket or a character device."""

    _MODE = 'wb'

    def write(self, data):
        if not isinstance(data, (bytes, bytearray, memoryview)):
            raise TypeError(f'data argument must be a bytes-like object, '
                            f'not {type(data).__name__!r}')
        if not data:
            return
        if self._closing or self._lost:
            self._conn_lost = getattr(self, '_conn_lost', 0) + 1
            if self._conn_lost >= constants.LOG_THRESHOLD_FOR_CONNLOST_WRITES:
                logger.warning('pipe closed by peer or os.write(pipe, data) raised exception.')
            return
        if type(data) is not bytes:
            data = bytes(data)
        # As asyncio's pipe transport, pause_writing runs inside write()
        # when the buffer goes over the high-water mark (rc 1): a drain()
        # right after the write then waits, and sees a broken pipe.
        rc = _net.ll_transport_write(self._tid, data, len(data))
        if rc == 1:
            self._pause_writing_event()
        elif rc < 0 and rc != _lib.LL_ECLOSED:
            check(rc, 'write')

    def can_write_eof(self):
        return True

    def write_eof(self):
        if self._closing:
            return
        self._closing = True
        _net.ll_transport_write_eof(self._tid)

    def close(self):
        # asyncio: write_eof is all a write pipe needs to close.
        if not self._lost and not self._closing:
            self.write_eof()

    def abort(self):
        if self._lost:
            return
        self._closing = True
        _net.ll_transport_abort(self._tid)


def _check_pipe(pipe, message):
    fileno = pipe.fileno()
    mode = os.fstat(fileno).st_mode
    if not (stat.S_ISFIFO(mode) or stat.S_ISSOCK(mode) or stat.S_ISCHR(mode)):
        raise ValueError(message)
    return fileno


class PipesMixin:
    """connect_read_pipe / connect_write_pipe of libloop.EventLoop."""

    connect_read_pipe = base_events.BaseEventLoop.connect_read_pipe
    connect_write_pipe = base_events.BaseEventLoop.connect_write_pipe

    def _open_pipe(self, pipe, kind, cls, protocol, waiter, extra, message):
        fileno = _check_pipe(pipe, message)
        os.set_blocking(fileno, False)
        dup = os.dup(fileno)
        try:
            tid = self._open_transport(dup, kind)
        except BaseException:
            os.close(dup)
            raise
        t = cls(self, tid, protocol, pipe, fileno, extra)
        if waiter is not None:
            t._waiter = waiter
            if cls is ReadPipeTransport:
                t._hold_reading()
        return t

    def _make_read_pipe_transport(self, pipe, protocol, waiter=None, extra=None):
        return self._open_pipe(pipe, _net.PIPE_READ, ReadPipeTransport, protocol, waiter, extra,
                               "Pipe transport is for pipes/sockets only.")

    def _make_write_pipe_transport(self, pipe, protocol, waiter=None, extra=None):
        return self._open_pipe(pipe, _net.PIPE_WRITE, WritePipeTransport, protocol, waiter, extra,
                               "Pipe transport is only for pipes, sockets and character devices")
