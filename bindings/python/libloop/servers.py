# SPDX-License-Identifier: MIT
"""Serving sockets: asyncio's Server (base_events.Server) calls
loop._start_serving / _stop_serving; libloop accepts (accept4 until EAGAIN,
EMFILE handled as asyncio does) and each new connection's first event tells
Python which server it belongs to (ev.arg, a token). A server whose ssl=
is a libloop.TLSConfig is served with libloop's TLS (ll_tls_server_open):
its connections' first event comes after the handshake, and a connection
whose handshake fails never reaches Python."""

import contextvars
import itertools
import os
from asyncio.log import logger

from . import _lib
from . import _netlib as _net
from ._lib import check
from .ssl_protocol import new_ssl_protocol
from .stream_transport import StreamTransport
from .tls_config import TLSConfig, ll_tls_server_open
from .tls_transport import TLSTransport


class _Serving:
    """One listening socket served by libloop."""

    __slots__ = ('sid', 'token', 'factory', 'sslcontext', 'server',
                 'handshake_timeout', 'shutdown_timeout', 'context')


class ServersMixin:
    """_start_serving / _stop_serving for asyncio's Server."""

    def _init_servers(self):
        self._serving = {}        # listening socket's fd -> _Serving
        self._serving_tokens = {}  # token -> _Serving
        self._tokens = itertools.count(1)
        # Unix listening sockets whose path _stop_serving removes, with the
        # inode they had: 3.13's create_unix_server(cleanup_socket=True)
        # fills it (asyncio's by reference); earlier versions leave it empty.
        self._unix_server_sockets = {}

    def _start_serving(self, protocol_factory, sock, sslcontext=None, server=None,
                       backlog=100, ssl_handshake_timeout=None,
                       ssl_shutdown_timeout=None):
        self._check_closed()
        fd = sock.fileno()
        if fd in self._serving:
            return
        s = _Serving()
        s.token = next(self._tokens)
        s.factory, s.sslcontext, s.server = protocol_factory, sslcontext, server
        s.handshake_timeout, s.shutdown_timeout = ssl_handshake_timeout, ssl_shutdown_timeout
        s.context = contextvars.copy_context()  # each connection runs in a copy
        cfg = 0
        if isinstance(sslcontext, TLSConfig):  # libloop's TLS (tls_transport.py)
            cfg = sslcontext._cid()  # (ValueError if it was closed)
            if ssl_handshake_timeout is not None or ssl_shutdown_timeout is not None:
                sslcontext.set_timeouts(ssl_handshake_timeout, ssl_shutdown_timeout)
        # libloop closes what it serves; the Server keeps (and closes) sock.
        dup = os.dup(fd)
        out = _net.u64()
        if cfg:  # connections arrive handshaken
            rc = ll_tls_server_open(self._id, dup, cfg, None, s.token, out)
        else:
            rc = _net.ll_server_open(self._id, dup, None, s.token, out)
        if rc < 0:
            os.close(dup)
            check(rc, 'serve')
        s.sid = out.value
        self._serving[fd] = s
        self._serving_tokens[s.token] = s
        self._io_sync()

    def _stop_serving(self, sock):
        inode = self._unix_server_sockets.pop(sock, None)
        path = sock.getsockname() if inode is not None else None
        s = self._serving.pop(sock.fileno(), None)
        self._io_sync()
        if s is not None:
            self._serving_tokens.pop(s.token, None)
            _lib.ll_release(s.sid)
        sock.close()
        if path is not None:
            _unlink_if_same(path, inode)

    def _stop_all_serving(self):
        for s in self._serving.values():
            _lib.ll_release(s.sid)
        self._serving.clear()
        self._serving_tokens.clear()
        self._io_sync()

    def _accepted(self, tid, token):
        """A connection libloop accepted: make its protocol and transport
        (asyncio's _accept_connection2)."""
        s = self._serving_tokens.get(token)
        if s is None:  # the server closed meanwhile
            _net.ll_transport_abort(tid)
            return None
        context = s.context.copy()
        try:
            protocol = context.run(s.factory)
            waiter = None
            if isinstance(s.sslcontext, TLSConfig):
                return TLSTransport(self, tid, protocol, s.sslcontext, s.server, context=context)
            if s.sslcontext:
                waiter = self.create_future()
                protocol = new_ssl_protocol(
                    self, protocol, s.sslcontext, waiter, server_side=True,
                    ssl_handshake_timeout=s.handshake_timeout,
                    ssl_shutdown_timeout=s.shutdown_timeout)
            t = StreamTransport(self, tid, protocol, None, s.server, context=context)
        except (SystemExit, KeyboardInterrupt):
            raise
        except BaseException as exc:
            _net.ll_transport_abort(tid)
            if self._debug:  # as asyncio: reported in debug mode only
                self.call_exception_handler({
                    'message': 'Error on transport creation for incoming connection',
                    'exception': exc})
            return None
        if waiter is not None:
            waiter.add_done_callback(_log_handshake_failure(self))
        return t


def _unlink_if_same(path, inode):
    """Remove a Unix server's socket file unless another took its place."""
    try:
        if os.stat(path).st_ino == inode:
            os.unlink(path)
    except FileNotFoundError:
        pass
    except OSError as err:
        logger.error('Unable to clean up listening UNIX socket %r: %r', path, err)


def _log_handshake_failure(loop):
    def done(fut):
        if not fut.cancelled() and fut.exception() is not None and loop.get_debug():
            logger.debug("%r: TLS handshake failed: %r", loop, fut.exception())
    return done
