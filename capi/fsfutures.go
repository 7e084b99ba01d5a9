// SPDX-License-Identifier: MIT

package main

/*
#include "capi.h"
*/
import "C"

import (
	"sync/atomic"
	"unsafe"

	"github.com/libloop/libloop/libloop"
)

// ll_fs_read's and ll_fs_write's future form on the C file pool: the
// future is the core's (StartHostFS: withdrawable, keeps the loop alive),
// the system call and the post are the worker's in C, as for
// ll_fs_read_cb, and the outcomes the loop took in one post batch are
// delivered to their futures in Go after the batch (finishFSFutures): no
// crossing per read beyond the call itself. Open, stat and the rest stay
// Go functions, which the pool's workers run through the core
// (QueueFS/ll__fs_run_go).

// fsCalls maps a call's token (the core's name for it, in its job's
// core field) to its job and future. Loop's thread.
type fsCalls struct {
	next  uint64
	calls map[uint64]fsFutureCall
}

type fsFutureCall struct {
	job *C.ll__fsjob
	fut *libloop.Future
}

// fsFutureIO queues a future-form read or write on the loop's C pool.
// ok false: the pool cannot open; the core's pool serves the call.
func (s *loopState) fsFutureIO(fd C.int, buf unsafe.Pointer, n C.size_t, off C.int64_t, write C.int) (f *libloop.Future, ok bool, err error) {
	if off < -1 {
		return nil, true, libloop.EINVAL
	}
	if s.loop.IsClosed() {
		return nil, true, libloop.ECLOSED
	}
	p := s.openFSPool()
	if p == nil {
		return nil, false, nil
	}
	c := &s.fsCalls
	c.next++
	token := c.next
	msg := "read failed"
	if write != 0 {
		msg = "write failed"
	}
	f, err = s.loop.StartHostFS(token, msg)
	if err != nil {
		return nil, true, err
	}
	j := C.ll__fspool_submit_future(p, fd, buf, n, off, write, C.uint64_t(token))
	if j == nil {
		s.loop.DropHostFS(f)
		return nil, true, libloop.ENOMEM
	}
	if c.calls == nil {
		c.calls = make(map[uint64]fsFutureCall)
	}
	c.calls[token] = fsFutureCall{job: j, fut: f}
	return f, true, nil
}

// WithdrawFS makes loopState the core's FSThreads for its own calls: a
// read or write no worker has started is marked withdrawn (the worker
// then skips the system call and posts it back cancelled).
func (s *loopState) WithdrawFS(token uint64) bool {
	c, ok := s.fsCalls.calls[token]
	if !ok {
		return false
	}
	return atomic.CompareAndSwapInt32((*int32)(unsafe.Pointer(&c.job.state)), C.LL__FSJOB_QUEUED, C.LL__FSJOB_WITHDRAWN)
}

// finishFSFutures delivers the outcomes the post batch just took (the
// pool's finished list, in order) and puts their jobs back on the free
// list. Loop's thread, after every post batch.
func (s *loopState) finishFSFutures() {
	pool := s.pending.fspool
	if pool == nil || pool.finished == nil {
		return
	}
	j := pool.finished
	pool.finished, pool.finished_tail = nil, nil
	for j != nil {
		next := j.next
		token, result := uint64(j.core), int64(j.result)
		j.next = pool.free
		pool.free = j
		c, ok := s.fsCalls.calls[token]
		if ok {
			delete(s.fsCalls.calls, token)
			if result < 0 {
				s.loop.FinishHostFS(c.fut, 0, int(result))
			} else {
				s.loop.FinishHostFS(c.fut, uintptr(result), 0)
			}
		}
		j = next
	}
}

// dropFSCalls forgets the calls in flight once the pool is closed (their
// futures are the core's, which its Close drops).
func (s *loopState) dropFSCalls() { s.fsCalls.calls = nil }
