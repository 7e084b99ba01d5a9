# SPDX-License-Identifier: MIT
"""Count the bytecodes W9's server executes per request, by where they are:
python3 count_bytecodes.py [asyncio|uvloop|libloop] [SECONDS]

Runs the W9 server (aiohttp hello-world, bench_net.py) under sys.settrace
with per-opcode events while wrk -t1 -c50 loads it, then prints opcodes and
Python calls per request: the loop's own code (libloop's binding, or
asyncio's loop) by function, the application's (aiohttp, yarl, ...) by
file. uvloop's loop is Cython and executes none. Tracing slows the server
about tenfold: counts only, no timings here.
"""

import asyncio
import collections
import os
import subprocess
import sys
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import bench_net  # noqa: E402

LOOP_DIRS = ('/libloop/', '/asyncio/')


def main():
    name = sys.argv[1] if len(sys.argv) > 1 else 'libloop'
    secs = sys.argv[2] if len(sys.argv) > 2 else '3'
    loop = bench_net.make_loop(name)
    asyncio.set_event_loop(loop)
    port = loop.run_until_complete(bench_net._start(loop, 'http'))
    ops = collections.Counter()
    calls = collections.Counter()

    def trace(frame, event, arg):
        code = frame.f_code
        path = code.co_filename
        base = path.rsplit('/', 1)[-1]
        key = f'{base}:{code.co_name}' if any(d in path for d in LOOP_DIRS) else base
        calls[key] += 1
        frame.f_trace_opcodes = True
        frame.f_trace_lines = False

        def per_opcode(frame, event, arg):
            if event == 'opcode':
                ops[key] += 1
            return per_opcode
        return per_opcode

    result = {}

    def load():
        time.sleep(0.3)
        out = subprocess.run(['wrk', '-t1', '-c50', f'-d{secs}s', f'http://127.0.0.1:{port}/'],
                             capture_output=True, text=True).stdout
        for line in out.splitlines():
            if 'requests in' in line:
                result['n'] = int(line.split()[0])
        loop.call_soon_threadsafe(loop.stop)

    thread = threading.Thread(target=load)
    thread.start()
    sys.settrace(trace)
    loop.run_forever()
    sys.settrace(None)
    thread.join()
    n = result.get('n') or 1
    loop_keys = [k for k in ops if ':' in k]
    print(f'{name}: {n} requests')
    print(f'loop code: {sum(ops[k] for k in loop_keys) / n:.1f} opcodes per request')
    for k in sorted(loop_keys, key=lambda k: -ops[k]):
        if ops[k] / n >= 0.5:
            print(f'  {ops[k] / n:7.1f} opcodes {calls[k] / n:6.2f} calls  {k}')
    print(f'application code: {sum(v for k, v in ops.items() if k not in loop_keys) / n:.1f} opcodes per request')


if __name__ == '__main__':
    main()
