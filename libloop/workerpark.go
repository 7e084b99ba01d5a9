// SPDX-License-Identifier: MIT

package libloop

import "sync"

// workerPark is where a pool's idle workers wait for jobs: a condition
// variable on the pool's mutex (wait releases it while asleep and takes it
// back). On Linux it is a futex word (workerpark_linux.go): a worker
// sleeps in the kernel and a submit wakes that thread directly, as
// libuv's uv_cond_signal does. With sync.Cond the woken goroutine is put
// on the submitting thread's run queue, and another thread must steal it
// from there: the Go scheduler sleeps ~3 µs (in practice the timer slack,
// up to ~50 µs) before stealing from a running P, which made one
// outstanding file read cost twice libuv's time per read.
type workerPark struct {
	mu *sync.Mutex
	parkWord
}

func (p *workerPark) init(mu *sync.Mutex) {
	p.mu = mu
	p.parkInit(mu)
}
