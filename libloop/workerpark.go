// SPDX-License-Identifier: MIT

package libloop

import (
	"sync"
	"sync/atomic"
)

// workerPark is where a pool's idle workers wait for jobs: a condition
// variable on the pool's mutex (wait releases it while asleep and takes it
// back; prepareSignal with it held, signal after releasing it).
//
// The file pool's workers sleep on a futex word (Linux; kernelPark): a
// submit wakes the sleeping thread directly, as libuv's uv_cond_signal
// does. With sync.Cond the woken goroutine is put on the submitting
// thread's run queue, and another thread must steal it from there: the Go
// scheduler sleeps ~3 µs (in practice the timer slack, up to ~50 µs)
// before stealing from a running P, which made one outstanding file read
// cost twice libuv's time. The price is an OS thread held by each idle
// worker (4 by default), as libuv's pool holds its threads; the executor
// (up to 32 workers) and the resolver keep goroutines that hold none.
type workerPark struct {
	mu     *sync.Mutex
	kernel bool          // sleep on seq with futex(2), else on cond
	seq    atomic.Uint32 // bumped by every signal (kernel mode)
	cond   *sync.Cond
}

// init binds the park to the pool's mutex; kernel asks for futex sleeps
// where the OS has them.
func (p *workerPark) init(mu *sync.Mutex, kernel bool) {
	p.mu = mu
	p.kernel = kernel && kernelParkWorks
	p.cond = sync.NewCond(mu)
}

// wait sleeps until signalled (or spuriously); called and returning with
// mu held.
func (p *workerPark) wait() {
	if !p.kernel {
		p.cond.Wait()
		return
	}
	v := p.seq.Load()
	p.mu.Unlock()
	kernelWait(&p.seq, v)
	p.mu.Lock()
}

// prepareSignal, with mu held, makes a worker that is on its way to sleep
// not sleep; signal then wakes one sleeping worker, after mu is released.
func (p *workerPark) prepareSignal() {
	if p.kernel {
		p.seq.Add(1)
	}
}

func (p *workerPark) signal() {
	if p.kernel {
		kernelWake(&p.seq, 1)
	} else {
		p.cond.Signal() // a waiter joined cond's list under mu: none is missed
	}
}

// broadcast wakes every sleeping worker (mu held).
func (p *workerPark) broadcast() {
	if p.kernel {
		p.seq.Add(1)
		kernelWake(&p.seq, 1<<30)
	} else {
		p.cond.Broadcast()
	}
}
