# SPDX-License-Identifier: MIT
"""struct sockaddr <-> Python address tuples, for ll_transport_sendto and
LL_DATAGRAM_RECEIVED (AF_INET, AF_INET6, AF_UNIX; Linux layout, which the
BSDs share but for a leading length byte, handled below).

Python's own socket module does this conversion inside sendto/recvfrom;
libloop sends and receives in Go, so the binding packs and unpacks the
C structs itself, giving the same tuples Python's recvfrom gives.
"""

import ctypes
import socket
import struct
import sys

_BSD = sys.platform.startswith(('darwin', 'freebsd', 'openbsd', 'netbsd'))
_IN = struct.Struct('!H4s8x')            # port, address (after the family)
_IN6 = struct.Struct('!HI16s')           # port, flowinfo, address
_SCOPE = struct.Struct('=I')             # scope id: host order
_FAMILY = struct.Struct('=H')
_UNIX_PATH_MAX = 108


def _head(family):
    if _BSD:
        return bytes([0, family])   # sa_len (filled below), sa_family
    return _FAMILY.pack(family)


def _numeric(family, host, port):
    """host as packed bytes (inet_pton), resolving a name as Python's
    sendto does (blocking: the caller asked for a name)."""
    if host == '':
        host = '0.0.0.0' if family == socket.AF_INET else '::'
    elif host == '<broadcast>' and family == socket.AF_INET:
        host = '255.255.255.255'
    try:
        return socket.inet_pton(family, host)
    except OSError:
        pass
    infos = socket.getaddrinfo(host, port, family, socket.SOCK_DGRAM)
    return socket.inet_pton(family, infos[0][4][0])


def pack(family, address):
    """The struct sockaddr bytes for address in family (TypeError or
    OSError for a bad one, as socket.sendto would raise)."""
    if family == socket.AF_INET:
        if not isinstance(address, tuple) or len(address) != 2:
            raise TypeError(f'AF_INET address must be tuple, not {type(address).__name__}')
        host, port = address
        raw = _head(family) + _IN.pack(port, _numeric(family, host, port))
    elif family == socket.AF_INET6:
        if not isinstance(address, tuple) or not 2 <= len(address) <= 4:
            raise TypeError(f'AF_INET6 address must be tuple, not {type(address).__name__}')
        host, port, flowinfo, scope_id = (tuple(address) + (0, 0))[:4]
        if '%' in host:   # 'fe80::1%eth0': the scope by name
            host, scope = host.split('%', 1)
            if not scope_id:
                scope_id = int(scope) if scope.isdigit() else socket.if_nametoindex(scope)
        raw = (_head(family) + _IN6.pack(port, flowinfo, _numeric(family, host, port))
               + _SCOPE.pack(scope_id))
    elif family == socket.AF_UNIX:
        path = address.encode() if isinstance(address, str) else bytes(address)
        if len(path) >= _UNIX_PATH_MAX:
            raise OSError('AF_UNIX path too long')
        raw = _head(family) + path + (b'' if path[:1] == b'\0' else b'\0')
    else:
        raise OSError(97, f'libloop: sendto for address family {family} is not supported')
    if _BSD:
        raw = bytes([len(raw)]) + raw[1:]
    return raw


def unpack(ptr, length):
    """The Python address for the struct sockaddr at ptr (length bytes),
    as socket.recvfrom gives it (None when there is none)."""
    if not ptr or length == 0:
        return None
    raw = ctypes.string_at(ptr, length)
    family = raw[1] if _BSD else _FAMILY.unpack_from(raw)[0]
    body = raw[2:]
    if family == socket.AF_INET:
        port, addr = _IN.unpack_from(body.ljust(_IN.size, b'\0'))
        return socket.inet_ntop(family, addr), port
    if family == socket.AF_INET6:
        body = body.ljust(_IN6.size + _SCOPE.size, b'\0')
        port, flowinfo, addr = _IN6.unpack_from(body)
        scope_id = _SCOPE.unpack_from(body, _IN6.size)[0]
        host = socket.inet_ntop(family, addr)
        if scope_id and addr[:2] == b'\xfe\x80':   # Python names the scope
            host = socket.getnameinfo((host, port, flowinfo, scope_id),
                                      socket.NI_NUMERICHOST | socket.NI_NUMERICSERV)[0]
        return host, port, flowinfo, scope_id
    if family == socket.AF_UNIX:
        if body[:1] == b'\0' and sys.platform.startswith('linux'):
            return body                                  # abstract name: bytes
        return body.split(b'\0', 1)[0].decode(sys.getfilesystemencoding(),
                                               'surrogateescape')
    return family, body
