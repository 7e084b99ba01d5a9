// SPDX-License-Identifier: MIT

package libloop

// A host is an embedder whose callbacks are not Go funcs: capi, behind
// libloop.so, runs C and Python callbacks. It tells the loop how to run
// them through one Host, set once with SetHost, and schedules them as
// HostCall values with the *Host methods (CallSoonHost, CallAtHost,
// CallSoonThreadsafeHost, AddReaderHost, NewTaskHost, ...; CallAtHostMany
// is CallAtHost for a run of handle-less timers). Whatever else a host
// plugs into (its own timers, queues, event delivery, spawning,
// environment, a send path of its own) is an optional interface of the
// same Host, listed below. A Go program that only uses Go funcs sets no
// Host.

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
// Everything else a host plugs into the loop is an optional interface
// that SetHost finds on it by type assertion; a Host that lacks one gets
// the loop's own behaviour:
//   - ChainRunner (chain.go): run the loop's next iterations inside a batch;
//   - EventSink (events.go): deliver the events of transports without a Go
//     Protocol;
//   - ReadWatcher: hear when a transport's reads stop or start being
//     deliverable (a host that delivers a batch of events itself);
//   - DirectWriter: hear when a host may send on a transport's fd itself
//     (writegate.go);
//   - DatagramReader (udp_hostread.go): read a datagram transport's
//     socket and deliver its datagrams itself, when the loop allows it;
//   - PostSource (hostbatch.go): a cross-thread queue of its own, taken
//     each iteration;
//   - TimerHost: a timer queue of its own (TimerSource, timersource.go),
//     merged with the loop's;
//   - HostQueue: a ready queue of its own, run once per iteration;
//   - Spawner: start children its own way (else Go's ForkExec);
//   - HostEnv: the environment children inherit (else os.Environ).
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

// ReadWatcher is a Host told every change of a transport's
// ReadsDelivered (withheld.go), at the moment it happens: a host that
// delivers a batch of events itself reads it between the events it hands
// over. It reads the value once when it learns of a transport; from then
// on ReadsChanged keeps it (the same value may be told twice, never a
// stale one).
type ReadWatcher interface {
	ReadsChanged(t *Transport, delivered bool)
}

// DirectWriter is a Host that sends on a transport's fd itself, as a first
// try before Write (writegate.go). It is told every change of
// DirectWritable, before anything else can observe the new state: before
// the fd is closed and before bytes are buffered. It reads the value once
// when it learns of a transport; from then on DirectChanged keeps it.
type DirectWriter interface {
	DirectChanged(t *Transport, writable bool)
}

// TimerHost is a Host with timers of its own, kept outside the loop: the
// loop merges the TimerSource's with its own (timersource.go). Timers is
// called once, by SetHost.
type TimerHost interface {
	Timers() TimerSource
}

// HostQueue is a Host with a ready queue of its own (the Python binding
// keeps call_soon in a Python deque, so scheduling costs no boundary
// crossing). While the host reports work (HostReady, or RunHostQueue's
// answer), the loop does not block in poll, and each iteration calls
// RunHostQueue once, before the callbacks of its own queue.
type HostQueue interface {
	// RunHostQueue runs the host's ready callbacks (those queued before it
	// was called) and reports whether it has more for the next iteration.
	RunHostQueue(l *Loop) (more bool)
}

// Spawner is a Host that starts programs the way it does best (capi: a
// vfork clone on Linux, whose child closes the other fds with one
// close_range and resets SIGPIPE and SIGXFSZ); without one, Spawn uses
// Go's ForkExec. Spawn gets the request (Env nil: the host's own,
// inherited) and returns the pid and a pidfd (-1 if none). The child must
// get Stdio[i] as fd i, the PassFDs, and no other fd unless InheritFDs;
// what it cannot do is its error (ENOTSUP), and a program that cannot run
// is its error too (execve's, setuid's ...), never a child that exits 127.
type Spawner interface {
	Spawn(r *SpawnRequest) (pid, pidfd int, err error)
}

// HostEnv is a Host whose environment is not the Go runtime's: a C host's
// setenv after the library loaded changes C's environ, while os.Environ
// keeps the snapshot taken at start. Spawn reads the inherited
// environment, and PATH, through it.
type HostEnv interface {
	Environ() []string
	Getenv(key string) string
}

// SetHost installs the loop's host, before the loop runs or makes a
// transport; a loop has one for its life. A Go program whose callbacks
// are Go funcs sets none.
func (l *Loop) SetHost(h Host) {
	l.host = h
	l.setChainRunner(h)
	l.io.sink, _ = h.(EventSink)
	l.gate.runner, _ = h.(ReadGater)
	l.io.reads, _ = h.(ReadWatcher)
	l.io.direct, _ = h.(DirectWriter)
	l.io.dgrams, _ = h.(DatagramReader)
	l.postSource, _ = h.(PostSource)
	l.fsThreads, _ = h.(FSThreads)
	if th, ok := h.(TimerHost); ok {
		l.timerSource = th.Timers()
	}
	l.hostQueue, _ = h.(HostQueue)
	l.spawn.spawner, _ = h.(Spawner)
	l.spawn.env, _ = h.(HostEnv)
}

// HostReady tells the loop that the host's queue (HostQueue) has work, so
// the next iteration runs it without blocking. Loop thread only.
func (l *Loop) HostReady() {
	if !l.hostPending {
		l.hostPending = true
		l.changed() // a chain running in the host's batch ends: the queue must run
	}
}
