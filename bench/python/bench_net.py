# SPDX-License-Identifier: MIT
"""The Python network and process workloads, one run per process (driven by
run_net.sh, which adds the external load: bench/loadgen and wrk).

    bench_net.py w4 LOOP [N]            W4: 64 B ping-pong, N round trips on one
                                        connection, client and server in one loop
    bench_net.py serve LOOP KIND [MAX_S]
                                        a server on 127.0.0.1, free port; prints
                                        "PORT n" once listening, serves until
                                        killed or MAX_S seconds (default 600)
    bench_net.py w8 LOOP [N] [PAR]      W8: N /bin/true children, at most PAR
                                        running (asyncio.create_subprocess_exec)

LOOP: asyncio (SelectorEventLoop) | uvloop | libloop.
KIND: proto (Protocol echo: data_received writes the data back; W5 and W10),
streams (asyncio.start_server echo: read, write, drain; W5),
http (aiohttp hello-world, web.Response(text=...); W9).
w4 and w8 print one line (cpu_us: this process's CPU per round trip or
per spawn, children excluded):
    RESULT loop=.. workload=W4 n=.. wall_s=.. per_s=.. cpu_us=..
"""

import asyncio
import sys
import time


def make_loop(name):
    if name == 'asyncio':
        return asyncio.SelectorEventLoop()
    if name == 'uvloop':
        import uvloop
        return uvloop.new_event_loop()
    if name == 'libloop':
        import libloop
        return libloop.new_event_loop()
    raise SystemExit(f'unknown loop {name}')


# ---- W4: ping-pong inside one loop ------------------------------------------------

class _Echo(asyncio.Protocol):
    def connection_made(self, transport):
        self.transport = transport

    def data_received(self, data):
        self.transport.write(data)


class _Pinger(asyncio.Protocol):
    """Sends 64 bytes, waits for all 64 back, N times; then resolves done."""

    def __init__(self, n, done):
        self.left, self.done, self.got = n, done, 0
        self.msg = b'p' * 64

    def connection_made(self, transport):
        self.transport = transport
        transport.write(self.msg)

    def data_received(self, data):
        self.got += len(data)
        if self.got < 64:
            return
        self.got -= 64
        self.left -= 1
        if self.left:
            self.transport.write(self.msg)
        elif not self.done.done():
            self.done.set_result(None)


def w4(loop, n):
    async def main():
        srv = await loop.create_server(_Echo, '127.0.0.1', 0)
        port = srv.sockets[0].getsockname()[1]
        done = loop.create_future()
        t0 = time.perf_counter()
        tr, _ = await loop.create_connection(lambda: _Pinger(n, done), '127.0.0.1', port)
        await done
        dt = time.perf_counter() - t0
        tr.close()
        srv.close()
        await srv.wait_closed()
        return dt
    return loop.run_until_complete(asyncio.wait_for(main(), 120))


# ---- servers: W5 (proto, streams), W9 (http), W10 (proto) -----------------------

async def _streams_echo(reader, writer):
    try:
        while True:
            data = await reader.read(65536)
            if not data:
                break
            writer.write(data)
            await writer.drain()
    except ConnectionError:
        pass
    writer.close()


async def _start(loop, kind):
    """Start KIND's server; returns its port."""
    if kind == 'proto':
        srv = await loop.create_server(_Echo, '127.0.0.1', 0, backlog=4096)
        return srv.sockets[0].getsockname()[1]
    if kind == 'streams':
        srv = await asyncio.start_server(_streams_echo, '127.0.0.1', 0, backlog=4096)
        return srv.sockets[0].getsockname()[1]
    if kind == 'http':
        from aiohttp import web

        async def hello(_request):
            return web.Response(text='Hello, World!')
        app = web.Application()
        app.router.add_get('/', hello)
        runner = web.AppRunner(app, access_log=None)
        await runner.setup()
        site = web.TCPSite(runner, '127.0.0.1', 0, backlog=4096)
        await site.start()
        return site._server.sockets[0].getsockname()[1]
    raise SystemExit(f'unknown server kind {kind}')


def serve(loop, kind, max_s):
    port = loop.run_until_complete(_start(loop, kind))
    print(f'PORT {port}', flush=True)
    loop.call_later(max_s, loop.stop)
    loop.run_forever()


# ---- W8: subprocesses --------------------------------------------------------------

def w8(loop, n, par):
    async def one(sem):
        async with sem:
            proc = await asyncio.create_subprocess_exec('/bin/true')
            rc = await proc.wait()
            if rc != 0:
                raise SystemExit(f'/bin/true exited {rc}')

    async def main():
        sem = asyncio.Semaphore(par)
        t0 = time.perf_counter()
        await asyncio.gather(*(one(sem) for _ in range(n)))
        return time.perf_counter() - t0
    return loop.run_until_complete(asyncio.wait_for(main(), 120))


def main():
    if len(sys.argv) < 3:
        raise SystemExit(__doc__)
    cmd, name = sys.argv[1], sys.argv[2]
    loop = make_loop(name)
    asyncio.set_event_loop(loop)
    if cmd == 'serve':
        kind = sys.argv[3]
        serve(loop, kind, float(sys.argv[4]) if len(sys.argv) > 4 else 600)
    elif cmd == 'w4':
        n = int(sys.argv[3]) if len(sys.argv) > 3 else 50_000
        c0 = time.process_time()
        dt = w4(loop, n)
        cpu = (time.process_time() - c0) * 1e6 / n
        print(f'RESULT loop={name} workload=W4 n={n} wall_s={dt:.4f} per_s={n / dt:.0f} '
              f'cpu_us={cpu:.2f}')
    elif cmd == 'w8':
        n = int(sys.argv[3]) if len(sys.argv) > 3 else 500
        par = int(sys.argv[4]) if len(sys.argv) > 4 else 16
        c0 = time.process_time()
        dt = w8(loop, n, par)
        cpu = (time.process_time() - c0) * 1e6 / n
        print(f'RESULT loop={name} workload=W8 n={n} par={par} wall_s={dt:.4f} per_s={n / dt:.0f} '
              f'cpu_us={cpu:.2f}')
    else:
        raise SystemExit(__doc__)
    loop.close()


if __name__ == '__main__':
    sys.exit(main())
