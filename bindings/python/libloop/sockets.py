# SPDX-License-Identifier: MIT
"""sock_* coroutines over add_reader/add_writer (asyncio selector_events').

Non-blocking sockets only: try the operation at once, and on EAGAIN watch
the fd and retry from the reader/writer callback until a future completes.
"""

import functools
import socket
from asyncio import base_events, unix_events

_Base = base_events.BaseEventLoop
_Unix = unix_events._UnixSelectorEventLoop


class SocketsMixin:
    """Low-level socket coroutines of libloop.EventLoop."""

    # sock_sendfile: asyncio's own (os.sendfile driven by add_writer, and
    # its read-and-sock_sendall fallback), by reference.
    sock_sendfile = _Base.sock_sendfile
    _sock_sendfile_fallback = _Base._sock_sendfile_fallback
    _check_sendfile_params = _Base._check_sendfile_params
    _sock_sendfile_native = _Unix._sock_sendfile_native
    _sock_sendfile_native_impl = _Unix._sock_sendfile_native_impl
    _sock_sendfile_update_filepos = _Unix._sock_sendfile_update_filepos
    _sock_add_cancellation_callback = _Unix._sock_add_cancellation_callback

    def _sock_check(self, sock):
        base_events._check_ssl_socket(sock)
        if self._debug and sock.gettimeout() != 0:
            raise ValueError("the socket must be non-blocking")

    def _sock_read_done(self, fd, fut, handle=None):
        if handle is None or not handle.cancelled():
            self.remove_reader(fd)

    def _sock_write_done(self, fd, fut, handle=None):
        if handle is None or not handle.cancelled():
            self.remove_writer(fd)

    def _watch_fd(self, fut, fd, writing, cb, *args):
        """Call cb(*args) whenever fd is ready, until fut is done."""
        self._ensure_fd_no_transport(fd)
        if writing:
            handle = self._add_writer(fd, cb, *args)
            done = self._sock_write_done
        else:
            handle = self._add_reader(fd, cb, *args)
            done = self._sock_read_done
        fut.add_done_callback(functools.partial(done, fd, handle=handle))

    async def _sock_wait_read(self, sock, op, *args):
        fut = self.create_future()
        fd = sock.fileno()
        self._watch_fd(fut, fd, False, self._sock_read_cb, fut, op, args)
        return await fut

    def _sock_read_cb(self, fut, op, args):
        if fut.done():
            return
        try:
            result = op(*args)
        except (BlockingIOError, InterruptedError):
            return  # try again next time
        except (SystemExit, KeyboardInterrupt):
            raise
        except BaseException as exc:
            fut.set_exception(exc)
        else:
            fut.set_result(result)

    async def _sock_read(self, sock, op, *args):
        """Try op(*args) at once; on EAGAIN wait for readability and retry."""
        self._sock_check(sock)
        try:
            return op(*args)
        except (BlockingIOError, InterruptedError):
            pass
        return await self._sock_wait_read(sock, op, *args)

    async def sock_recv(self, sock, n):
        """Receive up to n bytes from a non-blocking socket."""
        return await self._sock_read(sock, sock.recv, n)

    async def sock_recv_into(self, sock, buf):
        """Receive into buf; return the number of bytes written."""
        return await self._sock_read(sock, sock.recv_into, buf)

    async def sock_recvfrom(self, sock, bufsize):
        """Receive a datagram: (data, address)."""
        return await self._sock_read(sock, sock.recvfrom, bufsize)

    async def sock_sendall(self, sock, data):
        """Send all of data; None on success, an exception on error."""
        self._sock_check(sock)
        try:
            n = sock.send(data)
        except (BlockingIOError, InterruptedError):
            n = 0
        if n == len(data):
            return
        fut = self.create_future()
        fd = sock.fileno()
        self._watch_fd(fut, fd, True, self._sock_sendall, fut, sock,
                       memoryview(data), [n])
        return await fut

    def _sock_sendall(self, fut, sock, view, pos):
        if fut.done():
            return
        start = pos[0]
        try:
            n = sock.send(view[start:])
        except (BlockingIOError, InterruptedError):
            return
        except (SystemExit, KeyboardInterrupt):
            raise
        except BaseException as exc:
            fut.set_exception(exc)
            return
        start += n
        if start == len(view):
            fut.set_result(None)
        else:
            pos[0] = start

    async def sock_connect(self, sock, address):
        """Connect a non-blocking socket to address."""
        self._sock_check(sock)
        if sock.family in (socket.AF_INET, socket.AF_INET6):
            host, port = address[:2]
            info = base_events._ipaddr_info(host, port, sock.family,
                                            sock.type, sock.proto,
                                            *address[2:])
            if info is None:   # not a numeric address: resolve it
                infos = await self.getaddrinfo(
                    host, port, family=sock.family, type=sock.type,
                    proto=sock.proto)
                if not infos:
                    raise OSError('getaddrinfo() returned empty list')
                info = infos[0]
            address = info[4]
        fut = self.create_future()
        fd = sock.fileno()
        try:
            sock.connect(address)
        except (BlockingIOError, InterruptedError):
            self._watch_fd(fut, fd, True, self._sock_connect_cb, fut, sock,
                           address)
        except (SystemExit, KeyboardInterrupt):
            raise
        except BaseException as exc:
            fut.set_exception(exc)
        else:
            fut.set_result(None)
        try:
            return await fut
        finally:
            fut = None

    def _sock_connect_cb(self, fut, sock, address):
        if fut.done():
            return
        try:
            err = sock.getsockopt(socket.SOL_SOCKET, socket.SO_ERROR)
            if err != 0:
                raise OSError(err, f'Connect call failed {address}')
        except (BlockingIOError, InterruptedError):
            pass
        except (SystemExit, KeyboardInterrupt):
            raise
        except BaseException as exc:
            fut.set_exception(exc)
        else:
            fut.set_result(None)
        finally:
            fut = None

    async def sock_accept(self, sock):
        """Accept a connection: (conn, address), conn non-blocking."""
        self._sock_check(sock)
        fut = self.create_future()
        self._sock_accept(fut, sock)
        return await fut

    def _sock_accept(self, fut, sock):
        fd = sock.fileno()
        try:
            conn, address = sock.accept()
            conn.setblocking(False)
        except (BlockingIOError, InterruptedError):
            self._watch_fd(fut, fd, False, self._sock_accept, fut, sock)
        except (SystemExit, KeyboardInterrupt):
            raise
        except BaseException as exc:
            fut.set_exception(exc)
        else:
            fut.set_result((conn, address))
