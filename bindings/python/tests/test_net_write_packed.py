# SPDX-License-Identifier: MIT
"""StreamTransport.write's C call (libloop only): ll_transport_write_async_packed
through its raw ctypes form (no argtypes, the id as a c_uint64 made at the
first write), the declared form for writes longer than a C int, and the
packed result read back into the buffer's size and pause_writing."""

import asyncio
import ctypes
import unittest

from libloop import _lib, _netlib, stream_transport

from .base import LibloopLoop, LoopCase
from .netbase import connected_pair


class TestWritePacked(LoopCase, LibloopLoop, unittest.TestCase):

    def recv(self, peer, n):
        async def main():
            got = b''
            while len(got) < n:
                got += await self.loop.sock_recv(peer, n - len(got))
            return got
        peer.setblocking(False)
        return self.run_coro(main())

    def test_raw_form_results(self):
        t, p, peer = connected_pair(self)
        raw = _netlib.write_packed_raw
        self.assertEqual(raw(ctypes.c_uint64(t._tid), b'abc', 3), 0)
        self.assertEqual(raw(ctypes.c_uint64(0xdead), b'x', 1), _lib.LL_EBADHANDLE)
        self.assertEqual(raw(ctypes.c_uint64(t._tid), None, 1), _lib.LL_EINVAL)
        self.assertEqual(self.recv(peer, 3), b'abc')
        t.abort()
        self.assertEqual(raw(ctypes.c_uint64(t._tid), b'x', 1), _lib.LL_ECLOSED)
        self.run_coro(p.lost)

    def test_id_object_made_at_the_first_write(self):
        # An idle connection holds no c_uint64 (W10's bytes per connection).
        t, p, peer = connected_pair(self)
        self.assertFalse(hasattr(t, '_ctid'))
        t.write(b'one')
        self.assertEqual(t._ctid.value, t._tid)
        ctid = t._ctid
        t.write(b'two')
        self.assertIs(t._ctid, ctid)
        self.assertEqual(self.recv(peer, 6), b'onetwo')
        t.close()
        self.run_coro(p.lost)

    def test_long_write_takes_the_declared_form(self):
        # Lengths over WRITE_RAW_MAX (a C int) go through the argtypes form;
        # WRITE_RAW_MAX made 4 here to take that branch with small writes.
        t, p, peer = connected_pair(self)
        calls = []
        raw, big = stream_transport._write_raw, stream_transport._write_big

        def counted_raw(tid, data, n):
            calls.append(('raw', n))
            return raw(tid, data, n)

        def counted_big(tid, data, n):
            calls.append(('big', n))
            return big(tid, data, n)
        stream_transport._write_raw, stream_transport._write_big = counted_raw, counted_big
        saved_max = stream_transport._RAW_MAX
        stream_transport._RAW_MAX = 4
        try:
            t.write(b'abcd')
            t.write(b'efghij')
            t._send(b'klmnopq')
            t._send(b'rs')
        finally:
            stream_transport._write_raw, stream_transport._write_big = raw, big
            stream_transport._RAW_MAX = saved_max
        self.assertEqual(calls, [('raw', 4), ('big', 6), ('big', 7), ('raw', 2)])
        self.assertEqual(self.recv(peer, 19), b'abcdefghijklmnopqrs')
        t.close()
        self.run_coro(p.lost)

    def test_gathered_writes_flush_through_the_raw_form(self):
        # A task's writes are gathered; the flush sends them with one raw
        # call per transport, also for the transport's first write (the id
        # object is made then) and for a write of another batch.
        t, p, peer = connected_pair(self)
        calls = []
        raw = stream_transport._write_raw

        def counted(tid, data, n):
            calls.append((tid.value, bytes(data)))
            return raw(tid, data, n)

        async def main():
            stream_transport._write_raw = counted
            try:
                t.write(b'a')
                t.write(b'b')
                await asyncio.sleep(0.01)  # (a timer: the trampoline ends)
                t.write(b'c')
                await asyncio.sleep(0.01)
            finally:
                stream_transport._write_raw = raw
        self.run_coro(main())
        self.assertEqual(calls, [(t._tid, b'ab'), (t._tid, b'c')])
        self.assertEqual(self.recv(peer, 3), b'abc')
        t.close()
        self.run_coro(p.lost)

    def test_buffer_size_and_pause_from_the_result(self):
        # The packed result's size is the C buffer's, and its status runs
        # pause_writing inside the write that crosses the mark.
        t, p, peer = connected_pair(self)
        t.set_write_buffer_limits(high=200_000)
        chunk = b'w' * 65536
        out = ctypes.c_size_t()
        sizes = []
        for _ in range(400):
            t.write(chunk)
            _netlib.ll_transport_get_write_buffer_size(t._tid, ctypes.byref(out))
            sizes.append((t._cbuf, out.value))
            if 'pause' in p.calls:
                break
        self.assertEqual(p.calls, ['made', 'pause'])
        self.assertTrue(all(a == b for a, b in sizes), sizes)
        self.assertGreater(sizes[-1][0], 200_000)
        self.assertLessEqual(sizes[-2][0], 200_000)
        t.abort()
        self.run_coro(p.lost)

    def test_type_and_state_errors_keep_asyncio_order(self):
        t, p, peer = connected_pair(self)
        with self.assertRaisesRegex(TypeError, "data argument must be a bytes-like object, not 'str'"):
            t.write('text')
        t.write(bytearray())   # empty: nothing, no copy
        t.write(memoryview(b'mv'))
        t.write_eof()
        for data in (b'x', bytearray(b'x'), memoryview(b'x'), b'', bytearray()):
            with self.assertRaisesRegex(RuntimeError, r'Cannot call write\(\) after write_eof\(\)'):
                t.write(data)
        with self.assertRaises(TypeError):  # the type is checked first, as asyncio does
            t.write(1)
        self.assertEqual(self.recv(peer, 2), b'mv')
        t.close()
        self.run_coro(p.lost)
        t, p, peer = connected_pair(self)
        t.abort()
        self.run_coro(p.lost)
        for data in (b'late', bytearray(b'late'), memoryview(b'late'), b'', bytearray()):
            t.write(data)  # after connection_lost: dropped, counted unless empty
        self.assertEqual(t._conn_lost_writes, 3)
        with self.assertRaises(TypeError):
            t.write(1)
        self.run_coro(asyncio.sleep(0))


if __name__ == '__main__':
    unittest.main()
