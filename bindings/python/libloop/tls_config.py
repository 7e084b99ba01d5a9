# SPDX-License-Identifier: MIT
"""libloop.TLSConfig: a server's certificate loaded through libloop, so that
its connections run the library's own TLS (Go's crypto/tls, on the loop's
thread after a handshake on a goroutine; include/libloop/tls.h) instead of
asyncio's sslproto over the ssl module. Opt-in:

    cfg = libloop.TLSConfig()
    cfg.load_cert_chain('cert.pem', 'key.pem')
    server = await loop.create_server(factory, host, port, ssl=cfg)

The protocol gets plaintext through an ordinary libloop stream transport
(tls_transport.TLSTransport): no Python code runs per TLS record, which is
what asyncio's sslproto spends most of a TLS echo's time on. The method
names are SSLContext's for what both have; a standard ssl.SSLContext keeps
working unchanged through sslproto. Servers only: create_connection,
connect_accepted_socket and start_tls take an ssl.SSLContext.
"""

import os
import ssl
from ctypes import POINTER, c_char_p, c_double, c_int, c_size_t, c_uint64, c_void_p

from . import _lib
from ._lib import LIB, _fn, check

# Versions and client-certificate modes, as include/libloop/tls.h numbers them.
TLS_1_2 = 0x0303
TLS_1_3 = 0x0304
TLS_CLIENT_NONE = 0
TLS_CLIENT_REQUEST = 1
TLS_CLIENT_REQUIRE = 2

_u64p = POINTER(c_uint64)
# Loading and parsing files: the GIL is released (LIB), as the ssl module does.
ll_tls_config_new = _fn(LIB, "ll_tls_config_new", c_int, [_u64p])
ll_tls_config_load_cert_file = _fn(LIB, "ll_tls_config_load_cert_file", c_int,
                                   [c_uint64, c_char_p, c_char_p])
ll_tls_config_add_ca_pem = _fn(LIB, "ll_tls_config_add_ca_pem", c_int, [c_uint64, c_char_p, c_size_t])
ll_tls_config_load_ca_file = _fn(LIB, "ll_tls_config_load_ca_file", c_int, [c_uint64, c_char_p])
ll_tls_config_load_ca_dir = _fn(LIB, "ll_tls_config_load_ca_dir", c_int, [c_uint64, c_char_p])
ll_tls_config_set_client_auth = _fn(LIB, "ll_tls_config_set_client_auth", c_int, [c_uint64, c_int])
ll_tls_config_set_alpn = _fn(LIB, "ll_tls_config_set_alpn", c_int,
                             [c_uint64, POINTER(c_char_p), c_size_t])
ll_tls_config_set_versions = _fn(LIB, "ll_tls_config_set_versions", c_int, [c_uint64, c_int, c_int])
ll_tls_config_set_timeouts = _fn(LIB, "ll_tls_config_set_timeouts", c_int,
                                 [c_uint64, c_double, c_double])
ll_tls_server_open = _fn(_lib.PYLIB, "ll_tls_server_open", c_int,
                         [c_uint64, c_int, c_uint64, c_void_p, c_void_p, _u64p])

_VERSIONS = {ssl.TLSVersion.TLSv1_2: TLS_1_2, ssl.TLSVersion.TLSv1_3: TLS_1_3,
             ssl.TLSVersion.MINIMUM_SUPPORTED: TLS_1_2, ssl.TLSVersion.MAXIMUM_SUPPORTED: TLS_1_3}
_CLIENT_AUTH = {ssl.CERT_NONE: TLS_CLIENT_NONE, ssl.CERT_OPTIONAL: TLS_CLIENT_REQUEST,
                ssl.CERT_REQUIRED: TLS_CLIENT_REQUIRE}


def _path(p):
    """A path argument as bytes for C (str, bytes or os.PathLike)."""
    return os.fsencode(p)


class TLSConfig:
    """A TLS server configuration owned by libloop (ll_tls_config): pass it
    as create_server's / create_unix_server's / start_server's ssl=.
    Defaults: TLS 1.2 to 1.3, no client certificates asked, session tickets
    issued, handshake timeout 60 s, shutdown timeout 30 s (asyncio's)."""

    def __init__(self):
        out = c_uint64()
        check(ll_tls_config_new(out), 'TLSConfig')
        self._id = out.value
        self._verify_mode = ssl.CERT_NONE
        self._min, self._max = ssl.TLSVersion.TLSv1_2, ssl.TLSVersion.TLSv1_3
        self._alpn = ()
        self._timeouts = (60.0, 30.0)  # (the library's defaults, asyncio's too)

    def __repr__(self):
        return f'<libloop.TLSConfig id={self._id:#x}>'

    def _cid(self):
        if not self._id:
            raise ValueError('TLSConfig is closed')
        return self._id

    def close(self):
        """Release the config (servers and connections using it keep it)."""
        cid, self._id = self._id, 0
        if cid:
            _lib.ll_release(cid)

    def __del__(self):
        try:
            self.close()
        except Exception:  # interpreter shutdown: the library may be gone
            pass

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    # ---- SSLContext's names ---------------------------------------------------

    def load_cert_chain(self, certfile, keyfile=None, password=None):
        """Our certificate chain (leaf first) and private key, PEM files;
        keyfile None: the key is in certfile. Encrypted keys are refused
        (password must be None)."""
        if password is not None:
            raise ValueError('libloop.TLSConfig does not decrypt keys: give an unencrypted key')
        cert = _path(certfile)
        rc = ll_tls_config_load_cert_file(self._cid(), cert, _path(keyfile) if keyfile else cert)
        if rc == _lib.LL_EINVAL:
            raise ssl.SSLError(f'{certfile!r}: no certificate and matching private key in PEM')
        check(rc, 'load_cert_chain')

    def load_verify_locations(self, cafile=None, capath=None, cadata=None):
        """The CAs that clients' certificates must chain to (see
        verify_mode): a PEM file, a directory of PEM files, PEM text."""
        if cafile is None and capath is None and cadata is None:
            raise TypeError('cafile, capath and cadata cannot be all omitted')
        cid = self._cid()
        if cafile is not None:
            check(ll_tls_config_load_ca_file(cid, _path(cafile)), 'load_verify_locations')
        if capath is not None:
            check(ll_tls_config_load_ca_dir(cid, _path(capath)), 'load_verify_locations')
        if cadata is not None:
            if not isinstance(cadata, str):
                raise TypeError('cadata: PEM text (str); DER is not supported')
            data = cadata.encode('ascii')
            check(ll_tls_config_add_ca_pem(cid, data, len(data)), 'load_verify_locations')

    def set_alpn_protocols(self, protocols):
        """ALPN protocols in order of preference. A client that offers only
        others is refused (no_application_protocol); one that offers none
        is served without ALPN."""
        names = [p.encode('ascii') if isinstance(p, str) else bytes(p) for p in protocols]
        arr = (c_char_p * max(len(names), 1))(*names)
        check(ll_tls_config_set_alpn(self._cid(), arr, len(names)), 'set_alpn_protocols')
        self._alpn = tuple(n.decode('ascii') for n in names)

    @property
    def verify_mode(self):
        """ssl.CERT_NONE (default: no client certificate asked),
        CERT_OPTIONAL (asked; one sent must verify), CERT_REQUIRED."""
        return self._verify_mode

    @verify_mode.setter
    def verify_mode(self, mode):
        if mode not in _CLIENT_AUTH:
            raise ValueError(f'invalid verify_mode {mode!r}')
        check(ll_tls_config_set_client_auth(self._cid(), _CLIENT_AUTH[mode]), 'verify_mode')
        self._verify_mode = ssl.VerifyMode(mode)

    @property
    def minimum_version(self):
        """Lowest TLS version: ssl.TLSVersion.TLSv1_2 (default) or TLSv1_3."""
        return self._min

    @minimum_version.setter
    def minimum_version(self, v):
        self._set_versions(v, self._max)

    @property
    def maximum_version(self):
        """Highest TLS version: ssl.TLSVersion.TLSv1_3 (default) or TLSv1_2."""
        return self._max

    @maximum_version.setter
    def maximum_version(self, v):
        self._set_versions(self._min, v)

    def _set_versions(self, lo, hi):
        if lo not in _VERSIONS or hi not in _VERSIONS:
            raise ValueError('libloop.TLSConfig supports TLS 1.2 and 1.3 only')
        check(ll_tls_config_set_versions(self._cid(), _VERSIONS[lo], _VERSIONS[hi]), 'TLS versions')
        self._min = ssl.TLSVersion.TLSv1_2 if _VERSIONS[lo] == TLS_1_2 else ssl.TLSVersion.TLSv1_3
        self._max = ssl.TLSVersion.TLSv1_2 if _VERSIONS[hi] == TLS_1_2 else ssl.TLSVersion.TLSv1_3

    # ---- libloop's own ----------------------------------------------------------

    def set_timeouts(self, handshake=None, shutdown=None):
        """Handshake and shutdown timeouts in seconds (at first 60 and 30;
        None keeps the current one). create_server's ssl_handshake_timeout
        / ssl_shutdown_timeout, when given, are set here, so they hold for
        the config's later servers too."""
        hs = self._timeouts[0] if handshake is None else float(handshake)
        sd = self._timeouts[1] if shutdown is None else float(shutdown)
        if not (hs > 0 and sd > 0):
            raise ValueError('TLS timeouts must be positive numbers')
        check(ll_tls_config_set_timeouts(self._cid(), hs, sd), 'set_timeouts')
        self._timeouts = (hs, sd)
