// SPDX-License-Identifier: MIT

package libloop

import (
	"math"
	"sync"
	"sync/atomic"
	"unsafe"

	"golang.org/x/sys/unix"
)

// futex(2) operations on a word private to this process (linux/futex.h).
const (
	futexWaitPrivate = 0 | 128 // FUTEX_WAIT | FUTEX_PRIVATE_FLAG
	futexWakePrivate = 1 | 128 // FUTEX_WAKE | FUTEX_PRIVATE_FLAG
)

// parkWord is a futex condition variable: a sequence number that every
// signal bumps before it wakes a sleeper, so a worker that read it before
// a signal does not sleep through it.
type parkWord struct {
	seq atomic.Uint32
}

func (p *workerPark) parkInit(*sync.Mutex) {}

// wait sleeps until signalled (or spuriously); called and returning with
// mu held.
func (p *workerPark) wait() {
	v := p.seq.Load()
	p.mu.Unlock()
	// unix.Syscall6, not a raw call: the runtime hands this thread's P to
	// other goroutines while it sleeps.
	unix.Syscall6(unix.SYS_FUTEX, uintptr(unsafe.Pointer(&p.seq)), futexWaitPrivate,
		uintptr(v), 0, 0, 0)
	p.mu.Lock()
}

// prepareSignal, with mu held, makes a worker that is about to sleep not
// sleep; signal then wakes one sleeping worker, after mu is released.
func (p *workerPark) prepareSignal() { p.seq.Add(1) }

func (p *workerPark) signal() {
	unix.Syscall6(unix.SYS_FUTEX, uintptr(unsafe.Pointer(&p.seq)), futexWakePrivate, 1, 0, 0, 0)
}

// broadcast wakes every sleeping worker (the caller holds mu).
func (p *workerPark) broadcast() { p.wake(math.MaxInt32) }

func (p *workerPark) wake(n int) {
	p.seq.Add(1)
	unix.Syscall6(unix.SYS_FUTEX, uintptr(unsafe.Pointer(&p.seq)), futexWakePrivate,
		uintptr(n), 0, 0, 0)
}
