# SPDX-License-Identifier: MIT
"""Echo-server benchmark: a protocol-based echo server on one loop, 1 KiB
messages ping-pong over 100 connections driven by a client in another
process.

    python3 bench_echo.py run LOOP [--conns 100] [--size 1024] [--secs 5]
    python3 bench_echo.py run libloop --count    (crossings per echo)
    python3 bench_echo.py server LOOP [--count]   (prints its port, serves
                                                  until stdin, a pipe, closes)
    python3 bench_echo.py client PORT CONNS SIZE SECS

LOOP: asyncio | uvloop | libloop. `run` starts the server (LOOP) and the
client (uvloop if installed, else asyncio's loop: the same client for every
server) and prints one line:
RESULT loop=.. conns=.. size=.. secs=.. round_trips=.. rt_per_s=.. server_cpu_s=..
--count (server): count ctypes crossings (every ll_* call and every
trampoline call, as count_crossings.py) and print them per echo at exit.
"""

import argparse
import asyncio
import os
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))


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


class EchoServer(asyncio.Protocol):
    echoes = 0

    def connection_made(self, transport):
        self.transport = transport

    def data_received(self, data):
        EchoServer.echoes += 1
        self.transport.write(data)


def count_crossings():
    """Wrap libloop's ll_* functions and trampolines in counters."""
    import collections
    import libloop
    from libloop import _netlib
    sys.path.insert(0, HERE)
    import count_crossings as cc
    cc.wrap_calls()
    cc.wrap_callbacks()
    for name in dir(_netlib):
        fn = getattr(_netlib, name)
        if name.startswith('ll_') and callable(fn):
            def counted(*args, _fn=fn, _name=name):
                cc.counts[_name] += 1
                return _fn(*args)
            setattr(_netlib, name, counted)
    orig = libloop.EventLoop._on_events

    def on_events(self, *args):
        cc.counts['callback _on_events (batch sink)'] += 1
        return orig(self, *args)
    libloop.EventLoop._on_events = on_events
    return cc.counts if isinstance(cc.counts, collections.Counter) else None


def server(args):
    counts = count_crossings() if args.count else None
    loop = make_loop(args.loop)
    asyncio.set_event_loop(loop)
    srv = loop.run_until_complete(loop.create_server(EchoServer, '127.0.0.1', 0, backlog=1000))
    print(srv.sockets[0].getsockname()[1], flush=True)
    done = loop.create_future()
    loop.add_reader(sys.stdin.fileno(), lambda: done.done() or done.set_result(None))
    loop.run_until_complete(done)
    srv.close()
    loop.close()
    if counts is not None:
        n = max(EchoServer.echoes, 1)
        total = sum(counts.values())
        print(f'COUNT echoes={EchoServer.echoes} crossings={total} per_echo={total / n:.3f}')
        for name, c in counts.most_common():
            print(f'COUNT   {name}: {c} ({c / n:.3f} per echo)')


class PingPong(asyncio.Protocol):
    def __init__(self, msg, state):
        self.msg, self.state, self.got = msg, state, 0

    def connection_made(self, transport):
        self.transport = transport
        transport.write(self.msg)

    def data_received(self, data):
        self.got += len(data)
        if self.got >= len(self.msg):  # one round trip done
            self.got -= len(self.msg)
            self.state['n'] += 1
            if not self.state['stop']:
                self.transport.write(self.msg)


def client(args):
    try:
        import uvloop
        loop = uvloop.new_event_loop()
    except ImportError:
        loop = asyncio.new_event_loop()
    state = {'n': 0, 'stop': False}
    msg = b'x' * args.size

    async def main():
        conns = [await loop.create_connection(lambda: PingPong(msg, state), '127.0.0.1', args.port)
                 for _ in range(args.conns)]
        await asyncio.sleep(0.5)  # warm-up
        n0, t0 = state['n'], time.perf_counter()
        await asyncio.sleep(args.secs)
        n1, t1 = state['n'], time.perf_counter()
        state['stop'] = True
        for t, _ in conns:
            t.close()
        return n1 - n0, t1 - t0
    n, dt = loop.run_until_complete(main())
    print(f'{n} {dt:.4f}', flush=True)


def cpu_of(pid):
    with open(f'/proc/{pid}/stat') as f:
        fields = f.read().rsplit(')', 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf('SC_CLK_TCK')


def run(args):
    py = sys.executable
    srv = subprocess.Popen([py, __file__, 'server', args.loop] + ['--count'] * args.count,
                           stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    port = srv.stdout.readline().strip()
    try:
        c0 = cpu_of(srv.pid)
        out = subprocess.run([py, __file__, 'client', port, str(args.conns), str(args.size),
                              str(args.secs)], capture_output=True, text=True, check=True)
        c1 = cpu_of(srv.pid)
    finally:
        srv.stdin.close()
        rest = srv.stdout.read()
        srv.wait(10)
    if rest:
        print(rest, end='')
    n, dt = out.stdout.split()
    n, dt = int(n), float(dt)
    print(f'RESULT loop={args.loop} conns={args.conns} size={args.size} secs={dt:.2f} '
          f'round_trips={n} rt_per_s={n / dt:.0f} server_cpu_s={c1 - c0:.2f}', flush=True)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = ap.add_subparsers(dest='cmd', required=True)
    r = sub.add_parser('run')
    r.add_argument('loop')
    r.add_argument('--conns', type=int, default=100)
    r.add_argument('--size', type=int, default=1024)
    r.add_argument('--secs', type=float, default=5)
    r.add_argument('--count', action='store_true', help='count the server\'s ctypes crossings')
    s = sub.add_parser('server')
    s.add_argument('loop')
    s.add_argument('--count', action='store_true')
    c = sub.add_parser('client')
    c.add_argument('port', type=int)
    c.add_argument('conns', type=int)
    c.add_argument('size', type=int)
    c.add_argument('secs', type=float)
    args = ap.parse_args()
    {'run': run, 'server': server, 'client': client}[args.cmd](args)


if __name__ == '__main__':
    main()
