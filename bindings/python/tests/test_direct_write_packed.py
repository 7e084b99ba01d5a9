# SPDX-License-Identifier: MIT
"""StreamTransport.write's C call (libloop only): ll_transport_write_async_packed
through _hotpath.transport_write (the builtin of libloop-cpython.so, cpython/write.c, or
the declared ctypes call without it), and the packed result read back into
the buffer's size and pause_writing."""

import asyncio
import ctypes
import unittest

from libloop import _hotpath, _lib, _netlib

from .base import LibloopLoop, LoopCase
from .netbase import connected_pair, recv_exactly


class TestWritePacked(LoopCase, LibloopLoop, unittest.TestCase):

    def test_declared_call_results(self):
        t, p, peer = connected_pair(self)
        packed = _netlib.ll_transport_write_async_packed
        self.assertEqual(packed(t._tid, b'abc', 3), 0)
        self.assertEqual(packed(0xdead, b'x', 1), _lib.LL_EBADHANDLE)
        self.assertEqual(packed(t._tid, None, 1), _lib.LL_EINVAL)
        self.assertEqual(recv_exactly(self, peer, 3), b'abc')
        t.abort()
        self.assertEqual(packed(t._tid, b'x', 1), _lib.LL_ECLOSED)
        self.run_coro(p.lost)

    def test_transport_write_results(self):
        # The same results through the hot path's write, and bad arguments
        # refused without a send.
        write = _hotpath.transport_write
        t, p, peer = connected_pair(self)
        self.assertEqual(write(t._tid, b'abc'), 0)
        self.assertEqual(write(0xdead, b'x'), _lib.LL_EBADHANDLE)
        if _hotpath.ENABLED:  # (the declared call's checks are ctypes')
            for tid, data in ((t._tid, 'text'), (t._tid, bytearray(b'x')), (-1, b'x'),
                              (None, b'x'), (1 << 64, b'x')):
                with self.assertRaises((TypeError, OverflowError)):
                    write(tid, data)
            self.assertEqual(write(t._tid), _lib.LL_EINVAL)
            self.assertEqual(write(t._tid, b'x', b'y'), _lib.LL_EINVAL)
        self.assertEqual(write(t._tid, b'de'), 0)
        self.assertEqual(recv_exactly(self, peer, 5), b'abcde')
        t.abort()
        self.assertEqual(write(t._tid, b'x'), _lib.LL_ECLOSED)
        self.run_coro(p.lost)

    def test_idle_connection_holds_no_write_state(self):
        # Bytes per idle connection: a write adds no attribute.
        t, p, peer = connected_pair(self)
        before = {name for name in type(t).__slots__ if hasattr(t, name)}
        t.write(b'one')
        t.write(b'two')
        after = {name for name in type(t).__slots__ if hasattr(t, name)}
        self.assertEqual(after, before)
        self.assertEqual(recv_exactly(self, peer, 6), b'onetwo')
        t.close()
        self.run_coro(p.lost)

    def test_gathered_writes_flush_with_one_call(self):
        # A task's writes are gathered; the flush sends them with one call
        # per transport (the bytes _wpend holds: observed there, as the
        # flush is in C when the C side is on), also for a write of
        # another batch.
        t, p, peer = connected_pair(self)
        calls = []

        async def main():
            t.write(b'a')
            t.write(b'b')
            calls.append((t._wpend, self.loop._wq == [t]))
            await asyncio.sleep(0.01)  # (a timer: the trampoline ends)
            calls.append((t._wpend, self.loop._wq == []))
            t.write(b'c')
            calls.append((t._wpend, self.loop._wq == [t]))
            await asyncio.sleep(0.01)
        self.run_coro(main())
        self.assertEqual(calls, [(b'ab', True), (None, True), (b'c', True)])
        self.assertEqual(recv_exactly(self, peer, 3), b'abc')
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
        self.assertEqual(recv_exactly(self, peer, 2), b'mv')
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
