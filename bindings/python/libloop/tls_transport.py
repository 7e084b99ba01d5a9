# SPDX-License-Identifier: MIT
"""The transport of a connection that a libloop.TLSConfig server accepted:
a StreamTransport whose events carry plaintext, since libloop ran the
handshake before the connection's first event and encrypts and decrypts
on the loop's thread (include/libloop/tls.h). It keeps asyncio's SSL
transport semantics (sslproto._SSLProtocolTransport): connection_made
after the handshake; no write_eof (can_write_eof() is False); the peer's
EOF calls eof_received and then closes whatever it returns; close() sends
close_notify and flushes; sendfile falls back to reads and writes; the
TLS facts are in get_extra_info ('sslcontext', 'ssl_object', 'peercert',
'cipher', 'compression'), where 'ssl_object' is a TLSInfo, not an
ssl.SSLObject."""

import ctypes
import ssl
import tempfile
from asyncio import constants
from asyncio.log import logger
from ctypes import c_char_p, c_int, c_size_t, c_uint64, c_void_p

from . import _lib
from ._lib import _fn
from .stream_transport import StreamTransport

_P = _lib.PYLIB
ll_tls_version = _fn(_P, "ll_tls_version", c_int, [c_uint64])
ll_tls_cipher = _fn(_P, "ll_tls_cipher", c_int, [c_uint64, c_char_p, c_size_t])
ll_tls_alpn = _fn(_P, "ll_tls_alpn", c_int, [c_uint64, c_char_p, c_size_t])
ll_tls_peer_cert = _fn(_P, "ll_tls_peer_cert", c_int, [c_uint64, c_size_t, c_void_p, c_size_t])
ll_tls_verify_result = _fn(_P, "ll_tls_verify_result", c_int, [c_uint64])
ll_tls_resumed = _fn(_P, "ll_tls_resumed", c_int, [c_uint64])

_VERSION_NAMES = {0x0303: 'TLSv1.2', 0x0304: 'TLSv1.3'}
_TLS_EXTRA = frozenset(('sslcontext', 'ssl_object', 'peercert', 'cipher', 'compression'))


def _text(call, tid):
    """A string ll_tls_* call's answer (sized by a first call)."""
    n = _lib.check(call(tid, None, 0), 'TLS state')
    buf = ctypes.create_string_buffer(n + 1)
    call(tid, buf, n + 1)
    return buf.value.decode('ascii', 'replace')


def _secret_bits(cipher):
    if 'AES_128' in cipher:
        return 128
    if 'AES_256' in cipher or 'CHACHA20' in cipher:
        return 256
    return None


class TLSInfo:
    """What a connection's handshake settled, read from libloop when the
    connection is made (so it stays known after it closed): the subset of
    ssl.SSLObject's methods a server asks about. cipher() names suites as
    IANA does (TLS 1.3's names are OpenSSL's too; TLS 1.2's differ from
    OpenSSL's, e.g. TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256)."""

    server_side = True
    server_hostname = None

    def __init__(self, tid, context):
        self._context = context
        self._version = _VERSION_NAMES.get(_lib.check(ll_tls_version(tid), 'TLS version'))
        self._cipher = _text(ll_tls_cipher, tid)
        self._alpn = _text(ll_tls_alpn, tid) or None
        self._resumed = _lib.check(ll_tls_resumed(tid), 'TLS resumed') == 1
        self._verified = ll_tls_verify_result(tid) == 0
        self._der = None
        n = _lib.check(ll_tls_peer_cert(tid, 0, None, 0), 'peer certificate')
        if n:
            buf = ctypes.create_string_buffer(n)
            ll_tls_peer_cert(tid, 0, buf, n)
            self._der = buf.raw

    @property
    def context(self):
        """The server's TLSConfig (SSLObject.context is its SSLContext)."""
        return self._context

    def __repr__(self):
        return f'<libloop.TLSInfo {self._version} {self._cipher}>'

    def version(self):
        """'TLSv1.2' or 'TLSv1.3'."""
        return self._version

    def cipher(self):
        """(name, protocol version, secret bits), as SSLObject.cipher()."""
        return (self._cipher, self._version, _secret_bits(self._cipher))

    def compression(self):
        """Always None: TLS compression is not used."""
        return None

    def selected_alpn_protocol(self):
        """The ALPN protocol agreed, or None."""
        return self._alpn

    def session_reused(self):
        """Whether the client resumed a session (no full handshake)."""
        return self._resumed

    def getpeercert(self, binary_form=False):
        """The client's certificate, as SSLObject.getpeercert: None when it
        sent none; binary_form: its DER; else a dict of its fields when it
        verified (verify_mode CERT_OPTIONAL / CERT_REQUIRED), {} when not."""
        if self._der is None:
            return None
        if binary_form:
            return self._der
        if not self._verified:
            return {}
        # The ssl module decodes certificates from files only.
        with tempfile.NamedTemporaryFile('w', suffix='.pem') as f:
            f.write(ssl.DER_cert_to_PEM_cert(self._der))
            f.flush()
            return ssl._ssl._test_decode_cert(f.name)


class TLSTransport(StreamTransport):
    """A connection of a TLSConfig server (see the module doc)."""

    _sendfile_compatible = constants._SendfileMode.FALLBACK
    _start_tls_compatible = False
    __slots__ = ('_tls_config', '_tls_info')

    def __init__(self, loop, tid, protocol, config, server=None, context=None):
        self._tls_config = config
        self._tls_info = None
        super().__init__(loop, tid, protocol, None, server, context=context)

    def get_extra_info(self, name, default=None):
        if name not in _TLS_EXTRA:
            return super().get_extra_info(name, default)
        if name == 'sslcontext':
            return self._tls_config
        if name == 'compression':
            return None
        info = self._tls_info
        if info is None:
            return default  # (before connection_made)
        if name == 'ssl_object':
            return info
        if name == 'peercert':
            return info.getpeercert()
        return info.cipher()

    def _made(self):
        # What the handshake settled, read now as sslproto does (a few
        # µs against a handshake's ~700 µs of CPU): it stays known after
        # the connection is lost, when libloop no longer has it.
        self._tls_info = TLSInfo(self._tid, self._tls_config)
        super()._made()

    def can_write_eof(self):
        return False

    def write_eof(self):
        raise NotImplementedError("SSL doesn't support half-closes")

    def _eof_received(self):
        """The peer's EOF (close_notify, or a close between records):
        eof_received, then libloop closes, as sslproto does."""
        if self._loop.get_debug():
            logger.debug("%r received EOF", self)
        try:
            keep_open = self._protocol.eof_received()
        except (SystemExit, KeyboardInterrupt):
            raise
        except BaseException as exc:
            self._fatal_error(exc, 'Fatal error: protocol.eof_received() call failed.')
            return 0
        if keep_open:
            logger.warning('returning true from eof_received() has no effect when using ssl')
        self._closing = True
        return 0
