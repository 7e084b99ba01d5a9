# SPDX-License-Identifier: MIT
"""fd readers/writers over ll_add_reader/ll_add_writer, and signal wake-up.

One ctypes trampoline per direction per loop, routed by fd through a dict of
asyncio Handles, as asyncio's selector loop keeps one Handle per fd and
direction. Level-triggered: the callback runs every iteration while ready.
"""

import errno
import signal
import socket
import threading

from . import _lib
from . import _netlib as _net
from ._lib import check
from .handles import Handle


def _fileobj_to_fd(fileobj):
    # selectors._fileobj_to_fd: an int, or an object with fileno().
    if isinstance(fileobj, int):
        fd = fileobj
    else:
        try:
            fd = int(fileobj.fileno())
        except (AttributeError, TypeError, ValueError):
            raise ValueError(f"Invalid file object: {fileobj!r}") from None
    if fd < 0:
        raise ValueError(f"Invalid file descriptor: {fd}")
    return fd


class ReadersMixin:
    """add_reader/add_writer family of libloop.EventLoop."""

    def _init_readers(self):
        self._readers = {}
        self._writers = {}
        self._c_reader = _lib.IO_CALLBACK(self._reader_fire)
        self._c_writer = _lib.IO_CALLBACK(self._writer_fire)
        self._sig_socks = None
        self._sig_fd = -1
        self._sig_on = False
        self._fds_watched = False

    def _fds_sync(self):
        # One flag for the trampoline's per-round check (scheduling.py,
        # _run_ready): a reader or writer other than the signal wake-up
        # socket's is registered, so libloop must poll every iteration.
        # Kept at every change of _readers, _writers and _sig_fd; reading
        # it costs a callback chain ~55 ns less per round than the lengths did.
        self._fds_watched = len(self._readers) + len(self._writers) > (self._sig_fd >= 0)

    def _close_readers(self):
        for fd in list(self._readers):
            self._remove_reader(fd)
        for fd in list(self._writers):
            self._remove_writer(fd)
        if self._sig_socks is not None:
            self._drop_wakeup_fd()
            for s in self._sig_socks:
                s.close()
            self._sig_socks = None

    def _drop_wakeup_fd(self):
        # A KeyboardInterrupt landing right after set_wakeup_fd in
        # _signals_on loses the previous fd, so the run's end cannot put it
        # back and Python keeps writing to our socket. Never leave it
        # pointing at an fd about to be closed (and possibly reused).
        try:
            current = signal.set_wakeup_fd(-1)
            if current != self._sig_socks[1].fileno():
                signal.set_wakeup_fd(current)
        except (ValueError, OSError):
            pass   # not the main thread: it cannot be ours to drop

    # ---- public API --------------------------------------------------------

    def add_reader(self, fd, callback, *args):
        """Call callback(*args) whenever fd is readable."""
        self._ensure_fd_no_transport(fd)
        self._busy_is_transport(fd, self._add_reader, callback, args)

    def remove_reader(self, fd):
        """Stop watching fd for reading; True if a reader was removed."""
        self._ensure_fd_no_transport(fd)
        if _fileobj_to_fd(fd) not in self._readers:
            self._refuse_transport_fd(fd)
        return self._remove_reader(fd)

    def add_writer(self, fd, callback, *args):
        """Call callback(*args) whenever fd is writable."""
        self._ensure_fd_no_transport(fd)
        self._busy_is_transport(fd, self._add_writer, callback, args)

    def remove_writer(self, fd):
        """Stop watching fd for writing; True if a writer was removed."""
        self._ensure_fd_no_transport(fd)
        if _fileobj_to_fd(fd) not in self._writers:
            self._refuse_transport_fd(fd)
        return self._remove_writer(fd)

    def _ensure_fd_no_transport(self, fd):
        # Validates the fd only: asyncio's sock_* methods call this on every
        # wait, and a transport's fd is refused by libloop itself (EBUSY).
        _fileobj_to_fd(fd)

    def _busy_is_transport(self, fd, add, callback, args):
        # libloop refuses to watch an fd one of its transports owns (EBUSY):
        # asyncio says that with a RuntimeError naming the transport.
        try:
            add(fd, callback, *args)
        except OSError as exc:
            if exc.errno == errno.EBUSY:
                self._refuse_transport_fd(fd)
            raise

    def _refuse_transport_fd(self, fd):
        # Only on the rare paths (EBUSY, removing an fd not watched here):
        # asks each transport for its fd.
        fd = _fileobj_to_fd(fd)
        for transport in list(self._transports.values()):
            tid = getattr(transport, '_tid', None)
            if tid is not None and not getattr(transport, '_lost', False) \
                    and _net.ll_transport_fd(tid) == fd:
                raise RuntimeError(f'File descriptor {fd!r} is used by transport '
                                   f'{transport!r}')

    # ---- internals ---------------------------------------------------------

    def _add_io(self, table, add, tramp, fd, callback, args):
        self._check_closed()
        if self._debug or not callable(callback):
            self._check_callback(callback, 'add_reader'
                                 if table is self._readers else 'add_writer')
        fd = _fileobj_to_fd(fd)
        handle = Handle(callback, args, self, None)
        old = table.get(fd)
        if old is None:
            check(add(self._id, fd, tramp, None), "add_reader/add_writer")
        table[fd] = handle
        self._fds_sync()
        if old is not None:
            old.cancel()
        return handle

    def _add_reader(self, fd, callback, *args):
        return self._add_io(self._readers, _lib.ll_add_reader,
                            self._c_reader, fd, callback, args)

    def _add_writer(self, fd, callback, *args):
        return self._add_io(self._writers, _lib.ll_add_writer,
                            self._c_writer, fd, callback, args)

    def _remove_reader(self, fd):
        if self._closed and not self._readers:
            return False
        fd = _fileobj_to_fd(fd)
        handle = self._readers.pop(fd, None)
        if handle is None:
            return False
        self._fds_sync()
        _lib.ll_remove_reader(self._id, fd)
        handle.cancel()
        return True

    def _remove_writer(self, fd):
        if self._closed and not self._writers:
            return False
        fd = _fileobj_to_fd(fd)
        handle = self._writers.pop(fd, None)
        if handle is None:
            return False
        self._fds_sync()
        _lib.ll_remove_writer(self._id, fd)
        handle.cancel()
        return True

    def _io_fire(self, table, remove, fd):
        try:
            h = table.get(fd)
            if h is None:
                return
            if h._cancelled:
                remove(fd)
            else:
                self._run_handle(h)
        except BaseException as exc:
            self._stash(exc)

    def _reader_fire(self, _loop_id, fd, _arg):
        self._io_fire(self._readers, self._remove_reader, fd)

    def _writer_fire(self, _loop_id, fd, _arg):
        self._io_fire(self._writers, self._remove_writer, fd)

    # ---- signal wake-up ----------------------------------------------------
    # libloop's poll retries on EINTR inside Go, so Python would not see a
    # SIGINT until the next callback. As uvloop does, the main thread's
    # signal wake-up fd is a socket the loop watches: a signal wakes the
    # poll, the drain callback runs Python code, and Python's handlers
    # (KeyboardInterrupt, asyncio.Runner's SIGINT handler) run there.
    # Watching an fd makes libloop poll every iteration (~300 ns), and the
    # socket only matters when the loop may block, i.e. when the host queue
    # is empty: so it is watched only then (or when other fds force a poll
    # anyway: a reader or writer, or an open transport or listener, which
    # libloop polls itself). Toggling costs one crossing per busy<->idle
    # transition, and an epoll_ctl: a client with many requests in flight
    # on open connections (an asyncpg pool) went busy<->idle ~0.7 times a
    # request, where keeping the fd watched costs nothing.

    def _signals_on(self):
        self._sig_fd = -1
        self._sig_on = False
        self._fds_sync()
        if threading.current_thread() is not threading.main_thread():
            return None
        try:
            old = signal.set_wakeup_fd(self._sig_wakeup_socket(),
                                       warn_on_full_buffer=False)
        except (ValueError, OSError):
            return None
        fd = self._sig_socks[0].fileno()
        self._readers[fd] = Handle(self._drain_signals, (), self, None)
        self._sig_fd = fd
        self._fds_sync()
        if not self._ready or self._signal_handlers:
            self._sig_watch(True)
        return old

    def _sig_wakeup_socket(self):
        """The fd Python's signal trip writes to (made once per loop)."""
        if self._sig_socks is None:
            r, w = socket.socketpair()
            r.setblocking(False)
            w.setblocking(False)
            self._sig_socks = (r, w)
        return self._sig_socks[1].fileno()

    def _signals_off(self, old):
        fd = self._sig_fd
        self._sig_fd = -1
        self._sig_on = False
        if fd >= 0:
            try:
                # Whatever _sig_on said: a KeyboardInterrupt between its
                # update and the crossing in _sig_watch can leave it stale.
                _lib.ll_remove_reader(self._id, fd)
            finally:
                self._readers.pop(fd, None)
                self._fds_sync()
        if old is None:
            return
        w = self._sig_socks[1].fileno()
        if self._signal_handlers:
            # add_signal_handler's handlers outlive the run (signals.py):
            # keep the socket as the wake-up fd, restore the old one later.
            if old != w:
                self._sig_saved_wakeup = old
            return
        if old == w:   # our handlers came and went: give back what was there
            old, self._sig_saved_wakeup = self._sig_saved_wakeup, -1
        try:
            signal.set_wakeup_fd(old)
        except (ValueError, OSError):
            pass

    def _sig_watch(self, on):
        if not on and (self._signal_handlers or self._io_open
                       or len(self._readers) + len(self._writers) > 1):
            return   # signal handlers, or other fds make libloop poll anyway: keep watching
        self._sig_on = on
        if on:
            _lib.ll_add_reader(self._id, self._sig_fd, self._c_reader, None)
        else:
            _lib.ll_remove_reader(self._id, self._sig_fd)

    def _drain_signals(self):
        # The bytes are the numbers of the signals caught (Python's trip
        # writes them): add_signal_handler's callbacks run from them.
        try:
            while True:
                data = self._sig_socks[0].recv(4096)
                if not data:
                    break
                if self._signal_handlers:
                    self._dispatch_signals(data)
        except (BlockingIOError, InterruptedError, OSError):
            pass
