// SPDX-License-Identifier: MIT

package libloop

import (
	"sync/atomic"
	"unsafe"

	"golang.org/x/sys/unix"
)

// kernelParkWorks: Linux has futex(2).
const kernelParkWorks = true

// futex(2) operations on a word private to this process (linux/futex.h).
const (
	futexWaitPrivate = 0 | 128 // FUTEX_WAIT | FUTEX_PRIVATE_FLAG
	futexWakePrivate = 1 | 128 // FUTEX_WAKE | FUTEX_PRIVATE_FLAG
)

// kernelWait sleeps while *w == v. unix.Syscall6, not a raw call: the
// runtime hands this thread's P to other goroutines while it sleeps.
func kernelWait(w *atomic.Uint32, v uint32) {
	unix.Syscall6(unix.SYS_FUTEX, uintptr(unsafe.Pointer(w)), futexWaitPrivate, uintptr(v), 0, 0, 0)
}

// kernelWake wakes up to n threads sleeping on w. A raw call: FUTEX_WAKE
// never blocks, so the scheduler need not be told (Syscall6's
// entersyscall/exitsyscall pair on the submitting loop thread).
func kernelWake(w *atomic.Uint32, n int) {
	unix.RawSyscall6(unix.SYS_FUTEX, uintptr(unsafe.Pointer(w)), futexWakePrivate, uintptr(n), 0, 0, 0)
}
