// SPDX-License-Identifier: MIT

package libloop

// A host is an embedder whose callbacks are not Go funcs: capi, behind
// libloop.so, runs C and Python callbacks. It tells the loop how to run
// them through one Host, set once with SetHost, and schedules them as
// HostCall values with the *Host methods (CallSoonHost, CallAtHost,
// CallSoonThreadsafeHost, AddReaderHost, NewTaskHost, ...; CallAtHostMany
// is CallAtHost for a run of handle-less timers). A Go program that only
// uses Go funcs sets no Host.

// HostCallKind says which C signature a HostCall has.
type HostCallKind int32

const (
	// HostPlain is fn(uint64 id, void *arg): ll_callback, ll_done_callback, ll_step_fn.
	HostPlain HostCallKind = 0
	// HostIO is fn(uint64 id, int fd, void *arg): ll_io_callback.
	HostIO HostCallKind = 1
)

// HostCall is a host callback: a function address, the id it is called
// with, and an argument the loop never dereferences. Its layout is the C
// side's batch record (capi's ll__call): the Host's Buffer may be C memory.
type HostCall struct {
	Fn   uintptr
	Arg  uintptr
	ID   uint64
	FD   int32
	Kind HostCallKind
}

// Host runs a loop's host callbacks. The loop gathers consecutive ready
// host calls into the Host's Buffer and calls Run once for them all, so a
// host pays one boundary crossing per batch instead of one per callback.
//
// A Host may also implement, and SetHost then uses:
//   - ChainRunner: run the loop's next iterations inside a batch (chain.go);
//   - EventSink: deliver the events of transports without a Go Protocol;
//   - PostSource: a cross-thread queue of its own, taken each iteration.
type Host interface {
	// Buffer returns storage for up to n calls, valid until the next Buffer.
	Buffer(n int) []HostCall
	// Run calls the first n calls of the last Buffer in order, re-reading
	// each slot just before calling it: the loop clears the Fn of a call
	// whose handle an earlier call of the batch cancelled.
	Run(l *Loop, n int)
	// Call runs one host call now, outside any batch (a task's step).
	Call(l *Loop, c HostCall)
	// FutureDisposed is told of each of the loop's futures once it is
	// disposed, after its values were freed (capi drops its id).
	FutureDisposed(f *Future)
}

// SetHost installs the loop's host, before the loop runs or makes a
// transport; a loop has one for its life.
func (l *Loop) SetHost(h Host) {
	l.host = h
	l.setChainRunner(h)
	l.io.sink, _ = h.(EventSink)
	l.postSource, _ = h.(PostSource)
}
