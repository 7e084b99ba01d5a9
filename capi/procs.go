// SPDX-License-Identifier: MIT

package main

import (
	"os"
	"runtime"
)

// minProcs is the fewest Ps (Go scheduler slots) the library runs with.
//
// To the Go scheduler every call from the loop out to its C host (a
// host-queue run: a batch of Python callbacks; a C callback) is a system
// call, and its monitor thread (sysmon) takes the P from a thread that
// stays in one past ~20 µs, unless another P is idle. Go sizes GOMAXPROCS
// from the CPUs the process may use (its affinity mask, and since Go 1.25
// a cgroup CPU limit), so a process held to one CPU gets one P, never an
// idle one, and every long callback loses it: the return waits for a
// hand-off between threads and sysmon keeps polling every 20 µs. Measured:
// 1,500 host batches of 0.2 ms on one CPU, 2,500-2,850 context switches
// with one P, ~300 with two (the loop's own 5 ms yields) (tests/c/test_yield_one_cpu.c); aiohttp under wrk
// (the server bound to one CPU): 39.4-40.6k → 42.3-42.7k requests/s. A second
// P costs nothing while idle; the host thread is still the only one
// running loop code.
const minProcs = 2

// An explicit GOMAXPROCS in the environment is the user's and is kept.
// Setting it here also stops the runtime's own later resizing, so it is
// done only when the runtime chose fewer than minProcs.
func init() {
	if os.Getenv("GOMAXPROCS") == "" && runtime.GOMAXPROCS(0) < minProcs {
		runtime.GOMAXPROCS(minProcs)
	}
}
