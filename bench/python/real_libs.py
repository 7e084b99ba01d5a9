# SPDX-License-Identifier: MIT
"""Real Python libraries against real servers, one run per process (driven
by real_libs.sh, which starts PostgreSQL and Redis on 127.0.0.1 and adds the
HTTP load: wrk).

    real_libs.py pg1 LOOP PORT [N]       asyncpg, one connection: N x
                                         fetchval("SELECT $1::int", i)
    real_libs.py pgpool LOOP PORT [N]    asyncpg pool of 10, 200 tasks,
                                         N fetchval in all
    real_libs.py redis1 LOOP PORT [N]    redis.asyncio, one connection
                                         (single_connection_client): N x GET
    real_libs.py redispool LOOP PORT [N] redis.asyncio, BlockingConnectionPool
                                         of 10, 200 tasks, N GET in all
    real_libs.py smoke LOOP PG_PORT REDIS_PORT [N]
                                         the four clients above with N (default
                                         400) on LOOP, a fresh loop each, every
                                         answer checked; "ok ..." or "FAIL ..."
                                         per client, exit 1 if one failed
    real_libs.py serve LOOP [MAX_S]      uvicorn (h11) hello-world ASGI app on
                                         127.0.0.1, free port; prints "PORT n"
                                         once listening; serves until SIGTERM
                                         or MAX_S seconds (default 600)
    real_libs.py httpget PORT [N]        N keep-alive GET / against serve's
                                         server (checks status and body)
    real_libs.py ping-redis PORT         exits 0 once Redis answers PING
                                         (up to 30 s)

LOOP: asyncio (SelectorEventLoop) | uvloop | libloop. The clients print one
line (cpu_us: this process's CPU, all threads, per operation):
    RESULT loop=.. workload=pg1 n=.. wall_s=.. per_s=.. cpu_us=..
and exit non-zero if any value came back wrong. uvicorn 0.17's --loop knows
asyncio and uvloop only: those two use it (loop="asyncio", "uvloop", which
set the event loop policy); libloop sets its policy (libloop.install())
and runs uvicorn with loop="none", which is the same thing.

Every client checks every answer (value i for query i; the stored value
for GET): the smoke test (make test-real-servers) runs these same
functions with a small N.
"""

import asyncio
import os
import socket
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bench_net import make_loop  # noqa: E402

HOST = '127.0.0.1'
TASKS = 200     # the many-connection workloads: tasks sharing ...
POOL = 10       # ... a pool of this many connections
WARMUP = 200    # operations before the clock starts (connections are open)
REDIS_KEY = 'libloop:bench:key'
REDIS_VALUE = b'libloop-real-libs-value'
BODY = b'Hello, world!'


class WrongAnswer(Exception):
    pass


def _split(n, parts):
    """n operations over `parts` tasks, as evenly as possible."""
    return [n // parts + (1 if i < n % parts else 0) for i in range(parts)]


# ---- asyncpg ------------------------------------------------------------------------

async def pg1(port, n):
    import asyncpg
    conn = await asyncpg.connect(host=HOST, port=port, user='postgres', database='postgres')
    try:
        for i in range(WARMUP):
            if await conn.fetchval('SELECT $1::int', i) != i:
                raise WrongAnswer(f'fetchval({i})')
        bad = 0
        t0 = time.perf_counter()
        for i in range(n):
            if await conn.fetchval('SELECT $1::int', i) != i:
                bad += 1
        dt = time.perf_counter() - t0
    finally:
        await conn.close()
    if bad:
        raise WrongAnswer(f'{bad} of {n} fetchval answers wrong')
    return dt


async def pgpool(port, n):
    import asyncpg
    pool = await asyncpg.create_pool(host=HOST, port=port, user='postgres', database='postgres',
                                     min_size=POOL, max_size=POOL)
    wrong = []

    async def worker(base, count):
        for i in range(base, base + count):
            if await pool.fetchval('SELECT $1::int', i) != i:
                wrong.append(i)
    try:
        await asyncio.gather(*(worker(k * 1_000_000, 1) for k in range(TASKS)))
        t0 = time.perf_counter()
        await asyncio.gather(*(worker(k * 1_000_000, c) for k, c in enumerate(_split(n, TASKS))))
        dt = time.perf_counter() - t0
    finally:
        await pool.close()
    if wrong:
        raise WrongAnswer(f'{len(wrong)} of {n} fetchval answers wrong')
    return dt


# ---- redis-py (redis.asyncio) ----------------------------------------------------------

async def redis1(port, n):
    import redis.asyncio as aioredis
    r = aioredis.Redis(host=HOST, port=port, single_connection_client=True)
    try:
        await r.set(REDIS_KEY, REDIS_VALUE)
        for _ in range(WARMUP):
            if await r.get(REDIS_KEY) != REDIS_VALUE:
                raise WrongAnswer('GET')
        bad = 0
        t0 = time.perf_counter()
        for _ in range(n):
            if await r.get(REDIS_KEY) != REDIS_VALUE:
                bad += 1
        dt = time.perf_counter() - t0
    finally:
        await r.close()
    if bad:
        raise WrongAnswer(f'{bad} of {n} GET answers wrong')
    return dt


async def redispool(port, n):
    import redis.asyncio as aioredis
    pool = aioredis.BlockingConnectionPool(host=HOST, port=port, max_connections=POOL, timeout=60)
    r = aioredis.Redis(connection_pool=pool)
    wrong = []

    async def worker(count):
        for _ in range(count):
            if await r.get(REDIS_KEY) != REDIS_VALUE:
                wrong.append(1)
    try:
        await r.set(REDIS_KEY, REDIS_VALUE)
        await asyncio.gather(*(worker(1) for _ in range(TASKS)))
        t0 = time.perf_counter()
        await asyncio.gather(*(worker(c) for c in _split(n, TASKS)))
        dt = time.perf_counter() - t0
    finally:
        await r.close()
        await pool.disconnect()
    if wrong:
        raise WrongAnswer(f'{len(wrong)} of {n} GET answers wrong')
    return dt


CLIENTS = {'pg1': (pg1, 20_000), 'pgpool': (pgpool, 20_000),
           'redis1': (redis1, 50_000), 'redispool': (redispool, 50_000)}


def run_client(name, loop_name, port, n):
    fn, _ = CLIENTS[name]
    loop = make_loop(loop_name)
    asyncio.set_event_loop(loop)
    try:
        c0 = time.process_time()
        dt = loop.run_until_complete(asyncio.wait_for(fn(port, n), 600))
        cpu = (time.process_time() - c0) * 1e6 / n
    finally:
        loop.close()
    print(f'RESULT loop={loop_name} workload={name} n={n} wall_s={dt:.4f} per_s={n / dt:.0f} '
          f'cpu_us={cpu:.2f}', flush=True)


SMOKE = {'pg1': 'asyncpg one connection, {n} fetchval',
         'pgpool': 'asyncpg pool of 10, 200 tasks, {n} fetchval',
         'redis1': 'redis.asyncio one connection, {n} GET',
         'redispool': 'redis.asyncio pool of 10, 200 tasks, {n} GET'}


def smoke(loop_name, pg_port, redis_port, n):
    """The smoke test's clients, in one process (make test-real-servers)."""
    failed = 0
    for name, what in SMOKE.items():
        port = pg_port if name.startswith('pg') else redis_port
        loop = make_loop(loop_name)
        asyncio.set_event_loop(loop)
        try:
            loop.run_until_complete(asyncio.wait_for(CLIENTS[name][0](port, n), 120))
            print(f'ok   {what.format(n=n)} ({loop_name})', flush=True)
        except Exception as e:  # noqa: BLE001 -- reported, counted, and the next one runs
            failed += 1
            print(f'FAIL {what.format(n=n)} ({loop_name}): {type(e).__name__}: {e}', flush=True)
        finally:
            loop.close()
            asyncio.set_event_loop(None)
    return 1 if failed else 0


# ---- uvicorn -------------------------------------------------------------------------

async def hello_app(scope, receive, send):
    if scope['type'] != 'http':
        return
    await send({'type': 'http.response.start', 'status': 200,
                'headers': [(b'content-type', b'text/plain'),
                            (b'content-length', str(len(BODY)).encode())]})
    await send({'type': 'http.response.body', 'body': BODY})


def serve(loop_name, max_s):
    import uvicorn
    if loop_name == 'libloop':
        import libloop
        libloop.install()
        setup = 'none'
    elif loop_name in ('asyncio', 'uvloop'):
        setup = loop_name
    else:
        raise SystemExit(f'unknown loop {loop_name}')
    config = uvicorn.Config(hello_app, http='h11', loop=setup, lifespan='off', interface='asgi3',
                            access_log=False, log_level='warning', backlog=4096)
    server = uvicorn.Server(config)
    # IPPROTO_TCP, not 0: asyncio's transports set TCP_NODELAY only on a
    # socket whose proto says TCP (base_events._set_nodelay), so a socket
    # made with proto 0 (as uvicorn's own bind_socket does) leaves Nagle on
    # for asyncio's loop: ~40 ms per response (headers and body are two
    # writes, and the client delays its ACK). uvloop and libloop set
    # TCP_NODELAY either way.
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind((HOST, 0))
    sock.listen(4096)
    print(f'PORT {sock.getsockname()[1]}', flush=True)

    async def main():
        loop = asyncio.get_running_loop()
        want = {'asyncio': 'asyncio.unix_events', 'uvloop': 'uvloop', 'libloop': 'libloop'}[loop_name]
        if not type(loop).__module__.startswith(want):
            raise SystemExit(f'uvicorn runs on {type(loop).__module__}.{type(loop).__name__}, '
                             f'not {loop_name}')
        loop.call_later(max_s, setattr, server, 'should_exit', True)
        await server.serve(sockets=[sock])
    config.setup_event_loop()
    asyncio.run(main())


async def httpget(port, n):
    """n GET / on one keep-alive connection; every answer must be 200 + BODY."""
    reader, writer = await asyncio.open_connection(HOST, port)
    req = f'GET / HTTP/1.1\r\nHost: {HOST}:{port}\r\n\r\n'.encode()
    try:
        for i in range(n):
            writer.write(req)
            head = await reader.readuntil(b'\r\n\r\n')
            lines = head.decode('latin-1').split('\r\n')
            if not lines[0].startswith('HTTP/1.1 200'):
                raise WrongAnswer(f'request {i}: {lines[0]!r}')
            length = next(int(h.split(':', 1)[1]) for h in lines[1:]
                          if h.lower().startswith('content-length:'))
            body = await reader.readexactly(length)
            if body != BODY:
                raise WrongAnswer(f'request {i}: body {body!r}')
    finally:
        writer.close()
    print(f'httpget: {n} requests, all 200 with the body', flush=True)


def ping_redis(port):
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        try:
            with socket.create_connection((HOST, port), timeout=1) as s:
                s.sendall(b'PING\r\n')
                if s.recv(64).startswith(b'+PONG'):
                    return 0
        except OSError:
            pass
        time.sleep(0.1)
    return 1


def main():
    args = sys.argv[1:]
    if len(args) < 2:
        raise SystemExit(__doc__)
    cmd = args[0]
    try:
        if cmd in CLIENTS:
            if len(args) < 3:
                raise SystemExit(__doc__)
            n = int(args[3]) if len(args) > 3 else CLIENTS[cmd][1]
            run_client(cmd, args[1], int(args[2]), n)
        elif cmd == 'smoke':
            if len(args) < 4:
                raise SystemExit(__doc__)
            return smoke(args[1], int(args[2]), int(args[3]), int(args[4]) if len(args) > 4 else 400)
        elif cmd == 'serve':
            serve(args[1], float(args[2]) if len(args) > 2 else 600)
        elif cmd == 'httpget':
            asyncio.run(asyncio.wait_for(httpget(int(args[1]), int(args[2]) if len(args) > 2 else 300), 120))
        elif cmd == 'ping-redis':
            return ping_redis(int(args[1]))
        else:
            raise SystemExit(__doc__)
    except WrongAnswer as e:
        print(f'real_libs.py {cmd}: wrong answer: {e}', file=sys.stderr)
        return 1
    return 0


if __name__ == '__main__':
    sys.exit(main())
