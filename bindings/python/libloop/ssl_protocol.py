# SPDX-License-Identifier: MIT
"""TLS with an ssl.SSLContext on libloop's transports: asyncio's own
SSLProtocol (asyncio.sslproto, the same state machine, handshake,
shutdown, flow control and errors) with a shorter path for application
data once the connection is wrapped.

asyncio's SSLProtocol is a BufferedProtocol: the transport copies every
read into a 256 KiB buffer of the protocol (get_buffer, then
buffer_updated, which copies it again into the incoming MemoryBIO), and a
1 KiB echo round trip then runs ~45 Python calls: the state dispatch, a
second SSLObject.read that only raises SSLWantReadError, the app
transport's write through _write_appdata, _do_write, _process_outgoing
and _control_app_writing, then _process_outgoing and
_control_ssl_reading again after the app's data_received. Here:

- the protocol takes bytes (data_received): libloop's C event sink hands
  them over with no Python frame of the binding's own, and they go into
  the incoming MemoryBIO once;
- in the WRAPPED state, with a bytes-taking app protocol not paused, the
  read loop stops when neither the incoming BIO nor OpenSSL holds
  anything more (the read asyncio would make next can only raise
  SSLWantReadError: OpenSSL reads records whole from a memory BIO, and
  an incomplete one still raises there, as it does in asyncio's loop);
- the app transport's write() goes straight to SSLObject.write and the
  outgoing BIO to the transport while nothing is queued before it;
- the flow-control checks run asyncio's methods only when they would
  change something (the same comparisons, done inline).

Everything else (handshake, shutdown, a queued or paused write, a
BufferedProtocol app, SSLWantRead/WantWrite on write, any error) is
asyncio's code, unchanged. The internals this leans on are the same in
Python 3.11, 3.12 and 3.13; new_ssl_protocol checks them once and makes
asyncio's plain SSLProtocol where they differ, as it does with
LIBLOOP_PY_SSL_FAST=0 in the environment (A/B comparisons, tests).
"""

import os
import ssl
from asyncio import sslproto

_STATE = getattr(sslproto, 'SSLProtocolState', None)
_AGAIN = getattr(sslproto, 'SSLAgainErrors', (ssl.SSLWantReadError, ssl.SSLSyscallError))
_FAILED = 'Fatal error on SSL protocol'  # asyncio's message for the same errors
_WRITE_TYPES = (bytes, bytearray, memoryview)

# What the fast path reads or calls of asyncio's SSLProtocol (instance
# attributes are checked on the first instance).
_METHODS = ('_do_read', '_do_write', '_process_outgoing', '_control_app_writing',
            '_control_ssl_reading', '_write_appdata', '_call_eof_received',
            '_start_shutdown', '_do_handshake', '_do_flush', '_do_shutdown', '_fatal_error',
            '_get_app_transport')
_ATTRS = ('_incoming', '_outgoing', '_sslobj', '_state', '_app_reading_paused',
          '_app_protocol_is_buffer', '_write_backlog', '_write_buffer_size',
          '_ssl_writing_paused', '_ssl_reading_paused', '_app_writing_paused',
          '_outgoing_high_water', '_incoming_high_water', '_app_transport',
          '_app_transport_created', '_transport', '_app_protocol')


def _class_fits():
    return (_STATE is not None
            and all(hasattr(_STATE, s) for s in ('WRAPPED', 'DO_HANDSHAKE', 'FLUSHING', 'SHUTDOWN'))
            and all(callable(getattr(sslproto.SSLProtocol, m, None)) for m in _METHODS)
            and isinstance(getattr(sslproto.SSLProtocol, 'max_size', None), int)
            and hasattr(sslproto, '_SSLProtocolTransport'))


_ENABLED = os.environ.get('LIBLOOP_PY_SSL_FAST', '1') != '0' and _class_fits()


def new_ssl_protocol(loop, app_protocol, sslcontext, waiter, server_side=False,
                     server_hostname=None, *, call_connection_made=True,
                     ssl_handshake_timeout=None, ssl_shutdown_timeout=None):
    """The SSLProtocol for a libloop stream transport: SSLProtocol below,
    or asyncio's where this Python's sslproto does not fit it."""
    global _ENABLED
    cls = SSLProtocol if _ENABLED else sslproto.SSLProtocol
    p = cls(loop, app_protocol, sslcontext, waiter, server_side, server_hostname,
            call_connection_made=call_connection_made,
            ssl_handshake_timeout=ssl_handshake_timeout,
            ssl_shutdown_timeout=ssl_shutdown_timeout)
    if cls is not sslproto.SSLProtocol and not p._fits:
        _ENABLED = False  # (an sslproto whose instances differ: asyncio's, from now on)
        p._app_transport._closed = True  # (dropped unused: no unclosed-transport warning)
        p = sslproto.SSLProtocol(loop, app_protocol, sslcontext, waiter, server_side,
                                 server_hostname, call_connection_made=call_connection_made,
                                 ssl_handshake_timeout=ssl_handshake_timeout,
                                 ssl_shutdown_timeout=ssl_shutdown_timeout)
    return p


if _ENABLED:
    _WRAPPED = _STATE.WRAPPED
    _DO_HANDSHAKE = _STATE.DO_HANDSHAKE
    _FLUSHING = _STATE.FLUSHING
    _SHUTDOWN = _STATE.SHUTDOWN

    class _AppTransport(sslproto._SSLProtocolTransport):
        """asyncio's app-side transport; write() skips _write_appdata's
        queue while nothing waits in it."""

        def write(self, data):
            if not isinstance(data, _WRITE_TYPES):
                raise TypeError(f"data: expecting a bytes-like instance, "
                                f"got {type(data).__name__}")
            if not data:
                return
            p = self._ssl_protocol
            if p._state is not _WRAPPED or p._write_backlog or p._ssl_writing_paused:
                p._write_appdata((data,))
                return
            try:
                n = p._ssl_write(data)
            except _AGAIN:  # (renegotiation-like: asyncio queues it and retries)
                p._write_appdata((data,))
                return
            except Exception as ex:
                # As _write_appdata: the data stays queued, the protocol fails.
                p._write_backlog.append(data)
                p._write_buffer_size += len(data)
                p._fatal_error(ex, _FAILED)
                return
            try:
                if n < len(data):  # (a partial write: asyncio's loop goes on)
                    rest = data[n:]
                    p._write_backlog.append(rest)
                    p._write_buffer_size += len(rest)
                    p._do_write()
                    return
                out = p._outgoing.read()
                if out:
                    p._transport.write(out)
                if p._app_writing_paused or p._write_buffer_size >= p._outgoing_high_water:
                    p._control_app_writing()
            except Exception as ex:
                p._fatal_error(ex, _FAILED)

    class SSLProtocol(sslproto.SSLProtocol):
        """asyncio's SSLProtocol taking the transport's bytes, with the
        wrapped state's read and write done in fewer calls (module doc)."""

        _fits = False  # asyncio's __init__ makes every attribute of _ATTRS

        def __init__(self, *args, **kwargs):
            # asyncio allocates (and zeroes) a max_size buffer for
            # get_buffer; this protocol takes bytes, so get_buffer (which
            # grows the buffer on demand) only runs if a transport other
            # than libloop's calls it: 256 KiB less to allocate and zero per connection.
            self.max_size = 0
            super().__init__(*args, **kwargs)
            del self.max_size
            if SSLProtocol._fits or all(hasattr(self, a) for a in _ATTRS):
                inner = getattr(self._sslobj, '_sslobj', None)  # the _ssl object behind ssl.SSLObject
                src = inner if inner is not None and hasattr(inner, 'pending') else self._sslobj
                self._ssl_read = src.read
                self._ssl_write = src.write
                self._ssl_pending = src.pending
                SSLProtocol._fits = True  # (asyncio's __init__ made them all: checked once)

        def _get_app_transport(self):
            if self._app_transport is None:
                if self._app_transport_created:
                    raise RuntimeError('Creating _SSLProtocolTransport twice')
                self._app_transport = _AppTransport(self._loop, self)
                self._app_transport_created = True
            return self._app_transport

        def _process_outgoing(self):
            # asyncio's, with _control_app_writing called only when it
            # would pause (at or over the high-water mark) or resume (paused).
            if not self._ssl_writing_paused:
                data = self._outgoing.read()
                if data:
                    self._transport.write(data)
            if (self._app_writing_paused or self._outgoing.pending + self._write_buffer_size
                    >= self._outgoing_high_water):
                self._control_app_writing()

        def data_received(self, data):
            """The transport's bytes (what get_buffer/buffer_updated do in
            asyncio, without the intermediate buffer)."""
            self._incoming.write(data)
            state = self._state
            if state is _WRAPPED:
                self._do_read()
            elif state is _DO_HANDSHAKE:
                self._do_handshake()
            elif state is _FLUSHING:
                self._do_flush()
            elif state is _SHUTDOWN:
                self._do_shutdown()

        def _do_read(self):
            if (self._state is not _WRAPPED or self._app_reading_paused
                    or self._app_protocol_is_buffer):
                return super()._do_read()
            try:
                incoming = self._incoming
                read = self._ssl_read
                max_size = sslproto.SSLProtocol.max_size
                chunk = b'1'
                data = None
                try:
                    while True:
                        chunk = read(max_size)
                        if not chunk:  # close_notify
                            break
                        if data is None:
                            data = chunk
                        elif type(data) is list:
                            data.append(chunk)
                        else:
                            data = [data, chunk]
                        if not incoming.pending and not self._ssl_pending():
                            break  # (the next read could only raise SSLWantReadError)
                except _AGAIN:
                    pass
                if data is not None:
                    self._app_protocol.data_received(
                        data if type(data) is bytes else b''.join(data))
                if not chunk:
                    self._call_eof_received()
                    self._start_shutdown()
                if self._write_backlog:
                    self._do_write()
                elif (self._outgoing.pending or self._app_writing_paused
                      or self._write_buffer_size >= self._outgoing_high_water):
                    self._process_outgoing()
                if self._ssl_reading_paused or incoming.pending >= self._incoming_high_water:
                    self._control_ssl_reading()
            except Exception as ex:
                self._fatal_error(ex, _FAILED)


def takes_bytes(protocol):
    """True for the SSLProtocol above: a BufferedProtocol by class (as
    asyncio's) that libloop's transports hand bytes to."""
    return _ENABLED and type(protocol) is SSLProtocol
