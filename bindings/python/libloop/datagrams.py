# SPDX-License-Identifier: MIT
"""Datagram endpoints on libloop's C datagram transports.

create_datagram_endpoint is asyncio's own (base_events.BaseEventLoop),
taken by reference: it makes, binds and connects the socket with asyncio's
argument checks and messages, then calls _make_datagram_transport, which
hands the fd to libloop (ll_transport_open, LL_DATAGRAM). libloop receives
(LL_DATAGRAM_RECEIVED, with the sender as a struct sockaddr) and sends
(ll_transport_sendto, queueing what the kernel refuses for now); errors come
back as LL_ERROR_RECEIVED and go to protocol.error_received, the transport
staying open, as in asyncio.

sock_sendto / sock_recvfrom_into are the socket coroutines of the same
family, over add_reader/add_writer as in sockets.py.
"""

import os
from asyncio import base_events, constants, transports, trsock
from asyncio.log import logger

from . import _lib
from . import _netlib as _net
from . import sockaddr
from ._lib import check
from .transports import _CTransport


class DatagramTransport(_CTransport, transports.DatagramTransport):
    """A UDP or Unix datagram transport (selector_events'
    _SelectorDatagramTransport, on libloop)."""

    def __init__(self, loop, tid, sock, protocol, address=None, extra=None):
        super().__init__(loop, tid, protocol, extra, None, sock)
        self._family = sock.family
        self._address = address
        self._conn_lost = 0
        self._extra['socket'] = trsock.TransportSocket(sock)
        try:
            self._extra['sockname'] = sock.getsockname()
        except OSError:
            self._extra['sockname'] = None
        if 'peername' not in self._extra:
            try:
                self._extra['peername'] = sock.getpeername()
            except OSError:
                self._extra['peername'] = None
        self._connected = bool(self._extra['peername'])

    def sendto(self, data, addr=None):
        if not isinstance(data, (bytes, bytearray, memoryview)):
            raise TypeError(f'data argument must be a bytes-like object, '
                            f'not {type(data).__name__!r}')
        if not data:
            return
        if self._address:
            if addr not in (None, self._address):
                raise ValueError(f'Invalid address: must be None or {self._address}')
            addr = self._address
        if self._lost or self._closing:
            self._conn_lost += 1
            if self._address and self._conn_lost >= constants.LOG_THRESHOLD_FOR_CONNLOST_WRITES:
                logger.warning('socket.send() raised exception.')
            return
        if type(data) is not bytes:
            data = bytes(data)
        raw = None
        if addr is not None and not self._connected:
            try:
                raw = sockaddr.pack(self._family, addr)
            except OSError as exc:
                self._protocol.error_received(exc)
                return
            except (SystemExit, KeyboardInterrupt):
                raise
            except BaseException as exc:
                self._fatal_error(exc, 'Fatal write error on datagram transport')
                return
        rc = _net.ll_transport_sendto(self._tid, data, len(data), raw, len(raw) if raw else 0)
        if rc < 0 and rc != _lib.LL_ECLOSED:
            check(rc, 'sendto')

    # ---- events ---------------------------------------------------------------

    def _other_event(self, ev):
        kind = ev.kind
        if kind == _net.DATAGRAM_RECEIVED:
            self._call_protocol('datagram_received', _net.data_at(ev),
                                sockaddr.unpack(ev.addr, ev.addrlen))
        elif kind == _net.ERROR_RECEIVED:
            code = -ev.code
            self._call_protocol('error_received', OSError(code, os.strerror(code)))

    def _call_protocol(self, method, *args):
        try:
            getattr(self._protocol, method)(*args)
        except (SystemExit, KeyboardInterrupt):
            raise
        except BaseException as exc:
            # asyncio runs these in the read callback: the exception goes
            # to the exception handler and the transport stays open.
            self._loop.call_exception_handler({
                'message': f'Exception in protocol.{method}()',
                'exception': exc, 'transport': self, 'protocol': self._protocol})


class DatagramsMixin:
    """create_datagram_endpoint and the datagram socket coroutines."""

    create_datagram_endpoint = base_events.BaseEventLoop.create_datagram_endpoint

    def _make_datagram_transport(self, sock, protocol, address=None, waiter=None, extra=None):
        tid = self._open_transport(sock.fileno(), _net.DATAGRAM)
        t = DatagramTransport(self, tid, sock, protocol, address, extra)
        t._waiter = waiter
        return t

    async def sock_recvfrom_into(self, sock, buf, nbytes=0):
        """Receive a datagram into buf: (nbytes, address)."""
        if not nbytes:
            nbytes = len(buf)
        return await self._sock_read(sock, sock.recvfrom_into, buf, nbytes)

    async def sock_sendto(self, sock, data, address):
        """Send a datagram to address; the number of bytes sent."""
        self._sock_check(sock)
        try:
            return sock.sendto(data, address)
        except (BlockingIOError, InterruptedError):
            pass
        fut = self.create_future()
        self._watch_fd(fut, sock.fileno(), True, self._sock_sendto_cb, fut, sock, data, address)
        return await fut

    def _sock_sendto_cb(self, fut, sock, data, address):
        if fut.done():
            return
        try:
            n = sock.sendto(data, address)
        except (BlockingIOError, InterruptedError):
            return
        except (SystemExit, KeyboardInterrupt):
            raise
        except BaseException as exc:
            fut.set_exception(exc)
        else:
            fut.set_result(n)
