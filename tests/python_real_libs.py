# SPDX-License-Identifier: MIT
"""Real libraries on libloop's loop, as on asyncio's (make test-real-libs).

aiohttp from Debian's packages (for /usr/bin/python3): a web server with a
JSON route, a streamed body and a websocket, and aiohttp's client hitting
it over keep-alive connections; the same run on asyncio's loop and on
libloop's must give the same answers. Seconds, no timing asserts.
"""

import asyncio
import json
import sys

import aiohttp
from aiohttp import web

import libloop


async def exercise():
    async def hello(request):
        return web.json_response({'hello': request.match_info['name']})

    async def stream(request):
        resp = web.StreamResponse()
        await resp.prepare(request)
        for i in range(5):
            await resp.write(f'chunk{i};'.encode())
        await resp.write_eof()
        return resp

    async def echo_ws(request):
        ws = web.WebSocketResponse()
        await ws.prepare(request)
        async for msg in ws:
            await ws.send_str(msg.data.upper())
        return ws

    app = web.Application()
    app.add_routes([web.get('/hello/{name}', hello), web.get('/stream', stream),
                    web.get('/ws', echo_ws)])
    runner = web.AppRunner(app)
    await runner.setup()
    site = web.TCPSite(runner, '127.0.0.1', 0)
    await site.start()
    port = site._server.sockets[0].getsockname()[1]
    base = f'http://127.0.0.1:{port}'
    out = []
    try:
        async with aiohttp.ClientSession() as session:
            names = [f'n{i}' for i in range(50)]

            async def get(name):
                async with session.get(f'{base}/hello/{name}') as r:
                    return (await r.json())['hello']
            out.append(await asyncio.gather(*(get(n) for n in names)) == names)
            async with session.get(f'{base}/stream') as r:
                out.append(await r.text())
            async with session.ws_connect(f'{base}/ws') as ws:
                for word in ('ping', 'pong'):
                    await ws.send_str(word)
                    out.append((await ws.receive()).data)
    finally:
        await runner.cleanup()
    return out


def main():
    on_asyncio = asyncio.run(exercise())
    on_libloop = libloop.run(exercise())
    print('asyncio:', json.dumps(on_asyncio))
    print('libloop:', json.dumps(on_libloop))
    if on_libloop != on_asyncio or on_libloop[0] is not True:
        print('real libraries: 0 passed, 1 failed')
        return 1
    print(f'real libraries (aiohttp {aiohttp.__version__}, Python {sys.version.split()[0]}): '
          '1 passed, 0 failed')
    return 0


if __name__ == '__main__':
    sys.exit(main())
