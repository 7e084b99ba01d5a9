# SPDX-License-Identifier: MIT
"""An unchanged asyncio program that touches every kind of I/O; only the
loop factory it is run with changes.

    python3 examples/asyncio_tour.py            # on libloop
    python3 examples/asyncio_tour.py --asyncio  # on asyncio's own loop

A streams server and client, a Protocol with half-close, UDP, Unix
sockets, a subprocess with pipes, a signal handler, sendfile, TLS (with a
certificate the openssl command makes), run under asyncio.Runner with a
TaskGroup. The output is deterministic and the same on both loops, on
every Python libloop supports.
"""

import asyncio
import os
import signal
import ssl
import subprocess
import sys
import tempfile


async def streams():
    async def upper(reader, writer):
        writer.write((await reader.readline()).upper())
        await writer.drain()
        writer.close()
    server = await asyncio.start_server(upper, '127.0.0.1', 0)
    async with server:
        reader, writer = await asyncio.open_connection(*server.sockets[0].getsockname()[:2])
        writer.write(b'streams\n')
        line = await reader.readline()
        writer.close()
        await writer.wait_closed()
    return line.decode().strip()


class HalfClose(asyncio.Protocol):
    """Collects until the peer's EOF, answers, then closes its side."""

    def connection_made(self, transport):
        self.transport, self.data = transport, b''

    def data_received(self, data):
        self.data += data

    def eof_received(self):
        self.transport.write(b'got ' + self.data)
        self.transport.close()
        return True   # keep the transport open to write the answer


async def half_close():
    loop = asyncio.get_running_loop()
    server = await loop.create_server(HalfClose, '127.0.0.1', 0)
    async with server:
        reader, writer = await asyncio.open_connection(*server.sockets[0].getsockname()[:2])
        writer.write(b'half-close')
        writer.write_eof()
        answer = await reader.read()
        writer.close()
        await writer.wait_closed()
    return answer.decode()


class Datagrams(asyncio.DatagramProtocol):
    def __init__(self):
        self.got = asyncio.get_running_loop().create_future()

    def datagram_received(self, data, addr):
        if not self.got.done():
            self.got.set_result(data)


async def udp():
    loop = asyncio.get_running_loop()
    rx, rproto = await loop.create_datagram_endpoint(Datagrams, local_addr=('127.0.0.1', 0))
    tx, _ = await loop.create_datagram_endpoint(asyncio.DatagramProtocol,
                                                remote_addr=rx.get_extra_info('sockname'))
    tx.sendto(b'udp')
    data = await asyncio.wait_for(rproto.got, 5)
    tx.close()
    rx.close()
    return data.decode()


async def unix(tmp):
    path = os.path.join(tmp, 'tour.sock')

    async def echo(reader, writer):
        writer.write(await reader.readexactly(4))
        await writer.drain()
        writer.close()
    server = await asyncio.start_unix_server(echo, path)
    async with server:
        reader, writer = await asyncio.open_unix_connection(path)
        writer.write(b'unix')
        data = await reader.readexactly(4)
        writer.close()
        await writer.wait_closed()
    return data.decode()


async def child_process():
    proc = await asyncio.create_subprocess_exec(
        sys.executable, '-c', 'import sys; sys.stdout.write(sys.stdin.read()[::-1])',
        stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE)
    out, _ = await proc.communicate(b'ssecorpbus')
    return f'{out.decode()} exit {proc.returncode}'


async def a_signal():
    loop = asyncio.get_running_loop()
    got = loop.create_future()
    loop.add_signal_handler(signal.SIGUSR1, got.set_result, 'SIGUSR1')
    os.kill(os.getpid(), signal.SIGUSR1)
    try:
        return await asyncio.wait_for(got, 5)
    finally:
        loop.remove_signal_handler(signal.SIGUSR1)


async def sendfile(tmp):
    path = os.path.join(tmp, 'payload')
    with open(path, 'wb') as f:
        f.write(b'x' * 100_000)
    received = asyncio.get_running_loop().create_future()

    async def sink(reader, writer):
        received.set_result(len(await reader.read()))
        writer.close()
    server = await asyncio.start_server(sink, '127.0.0.1', 0)
    async with server:
        reader, writer = await asyncio.open_connection(*server.sockets[0].getsockname()[:2])
        with open(path, 'rb') as f:
            sent = await asyncio.get_running_loop().sendfile(writer.transport, f)
        writer.write_eof()
        n = await received
        writer.close()
        await writer.wait_closed()
    return f'sent {sent}, received {n}'


async def make_certificate(tmp):
    # A child process the loop waits for: the RSA key takes from 0.1 s to
    # seconds on a loaded machine, and subprocess.run would block the loop
    # (and every other part of the tour) meanwhile.
    cert, key = os.path.join(tmp, 'cert.pem'), os.path.join(tmp, 'key.pem')
    args = ['openssl', 'req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-days', '1',
            '-subj', '/CN=localhost', '-addext', 'subjectAltName=DNS:localhost',
            '-keyout', key, '-out', cert]
    proc = await asyncio.create_subprocess_exec(*args, stdout=subprocess.DEVNULL,
                                                stderr=subprocess.DEVNULL)
    if await proc.wait() != 0:
        raise subprocess.CalledProcessError(proc.returncode, args)
    return cert, key


async def tls(tmp):
    try:
        cert, key = await make_certificate(tmp)
    except (OSError, subprocess.CalledProcessError):
        return 'skipped (no openssl command)'
    server_ctx = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    server_ctx.load_cert_chain(cert, key)
    client_ctx = ssl.create_default_context(cafile=cert)

    async def hello(reader, writer):
        writer.write(b'over ' + writer.get_extra_info('ssl_object').version().encode() + b'\n')
        await writer.drain()
        writer.close()
    server = await asyncio.start_server(hello, '127.0.0.1', 0, ssl=server_ctx)
    async with server:
        port = server.sockets[0].getsockname()[1]
        reader, writer = await asyncio.open_connection('127.0.0.1', port, ssl=client_ctx,
                                                       server_hostname='localhost')
        line = await reader.readline()
        writer.close()
        try:
            await writer.wait_closed()
        except (ssl.SSLError, ConnectionError):
            pass
    return line.decode().strip()


async def main():
    with tempfile.TemporaryDirectory() as tmp:
        async with asyncio.TaskGroup() as tg:
            jobs = {
                'streams': tg.create_task(streams()),
                'half-close': tg.create_task(half_close()),
                'udp': tg.create_task(udp()),
                'unix': tg.create_task(unix(tmp)),
                'subprocess': tg.create_task(child_process()),
                'signal': tg.create_task(a_signal()),
                'sendfile': tg.create_task(sendfile(tmp)),
                'tls': tg.create_task(tls(tmp)),
            }
    for name, task in jobs.items():
        print(f'{name}: {task.result()}')
    print('done')


def loop_factory():
    if '--asyncio' in sys.argv:
        print('loop: asyncio', file=sys.stderr)
        return asyncio.new_event_loop()
    import libloop
    print('loop: libloop', file=sys.stderr)
    return libloop.new_event_loop()


if __name__ == '__main__':
    with asyncio.Runner(loop_factory=loop_factory) as runner:
        runner.run(main())
