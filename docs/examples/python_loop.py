# SPDX-License-Identifier: MIT
"""python_loop.py — an unchanged asyncio program on libloop's loop: tasks,
a timeout, a TCP echo on 127.0.0.1, and the executor. libloop.run is
asyncio.run with libloop's loop; asyncio.Runner(loop_factory=
libloop.new_event_loop) and libloop.install() are the other ways in."""

import asyncio

import libloop


async def handle(reader, writer):
    writer.write(await reader.read(100))
    await writer.drain()
    writer.close()


async def main():
    loop = asyncio.get_running_loop()
    assert isinstance(loop, libloop.EventLoop)

    results = await asyncio.gather(asyncio.sleep(0.01, "a"), asyncio.sleep(0.02, "b"))
    try:
        await asyncio.wait_for(asyncio.sleep(10), 0.01)
    except asyncio.TimeoutError:
        results.append("timeout")

    server = await asyncio.start_server(handle, "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    writer.write(b"ping")
    results.append((await reader.read(100)).decode())
    writer.close()
    server.close()
    await server.wait_closed()

    results.append(await loop.run_in_executor(None, sum, range(10)))
    return results


if __name__ == "__main__":
    got = libloop.run(main())
    assert got == ["a", "b", "timeout", "ping", 45], got
    print("python_loop:", got)
