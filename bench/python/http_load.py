# SPDX-License-Identifier: MIT
"""A fixed-count keep-alive HTTP/1.1 load: CONNS connections to
127.0.0.1:PORT, each sending `GET / HTTP/1.1` and its next request only when
the whole response (headers and Content-Length bytes) is back, until TOTAL
responses, every one checked for status 200. wrk runs for a time, not a
count; server_instructions.sh needs a count (its two runs differ by a known
number of requests). Refuses any host but 127.0.0.1.

    http_load.py PORT CONNS TOTAL
"""

import selectors
import socket
import sys

_REQ = b'GET / HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n'


class _Conn:
    __slots__ = ('sock', 'buf')

    def __init__(self, port):
        self.sock = socket.create_connection(('127.0.0.1', port))
        self.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self.buf = b''

    def response(self):
        """One whole response taken off buf, or None if it is not all here."""
        end = self.buf.find(b'\r\n\r\n')
        if end < 0:
            return None
        head = self.buf[:end].split(b'\r\n')
        if not head[0].startswith(b'HTTP/1.1 200 '):
            raise SystemExit(f'http_load: {head[0]!r}')
        length = 0
        for line in head[1:]:
            name, _, value = line.partition(b':')
            if name.strip().lower() == b'content-length':
                length = int(value)
        if len(self.buf) < end + 4 + length:
            return None
        self.buf = self.buf[end + 4 + length:]
        return True


def main():
    if len(sys.argv) != 4:
        raise SystemExit(__doc__)
    port, conns, total = (int(a) for a in sys.argv[1:])
    sel = selectors.DefaultSelector()
    sent = done = 0
    for _ in range(min(conns, total)):
        c = _Conn(port)
        c.sock.sendall(_REQ)
        sent += 1
        sel.register(c.sock, selectors.EVENT_READ, c)
    while done < total:
        ready = sel.select(120)
        if not ready:
            raise SystemExit(f'http_load: no response in 120 s ({done} of {total} done)')
        for key, _ in ready:
            c = key.data
            chunk = c.sock.recv(65536)
            if not chunk:
                raise SystemExit('http_load: the server closed a connection')
            c.buf += chunk
            while c.response():
                done += 1
                if sent < total:
                    c.sock.sendall(_REQ)
                    sent += 1
    print(f'RESULT http_load n={done}')


if __name__ == '__main__':
    main()
