# SPDX-License-Identifier: MIT
"""python -m libloop: the version, the library in use, a one-line
self-test (a timer, a task and a TCP echo on 127.0.0.1), and whether the
hot path's C object (libloop-cpython.so) runs, or why not."""

import asyncio
import sys

import libloop
from libloop import _hotpath


async def _self_test():
    async def echo(reader, writer):
        writer.write(await reader.read(100))
        await writer.drain()
        writer.close()

    server = await asyncio.start_server(echo, "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    writer.write(b"ping")
    got = await asyncio.wait_for(reader.read(100), 5)
    writer.close()
    server.close()
    await server.wait_closed()
    await asyncio.sleep(0.01)
    return got == b"ping"


def main():
    print(f"libloop {libloop.__version__}")
    print(f"library: {libloop.LIBRARY_PATH}")
    try:
        ok = libloop.run(_self_test())
    except Exception as exc:  # report, do not trace back
        print(f"self-test: FAILED ({exc!r})")
        return 1
    print("self-test: " + ("ok (timer, task, TCP echo)" if ok else "FAILED (echo mismatch)"))
    print(f"hot path in C: {_hotpath.OBJECT_PATH}" if _hotpath.ENABLED
          else f"hot path in C: off ({_hotpath.OFF_REASON})")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
