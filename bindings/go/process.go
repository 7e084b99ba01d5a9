// SPDX-License-Identifier: MIT

package libloop

import (
	"fmt"
	"sync"
	"syscall"
	"unsafe"

	"github.com/ebitengine/purego"
)

// Subprocesses (libloop/process.h): Loop.Spawn starts a child whose pipes
// are transports of the library; their events and the exit reach one Go
// func. The C protocol fn has a signature of its own
// (int fn(ll_loop, const ll_event *, void *arg)), so it gets one fixed
// trampoline, routed by arg (a key into procTable) as the others are.

// RawProcess holds the ll_ functions of process.h (and the two transport
// calls a child's stdin needs), bound on first use by Lib.RawProcess.
type RawProcess struct {
	Spawn          func(loop uint64, opts unsafe.Pointer, fn, arg uintptr, out unsafe.Pointer) int32        // ll_spawn
	SpawnEx        func(loop uint64, opts, extra unsafe.Pointer, fn, arg uintptr, out unsafe.Pointer) int32 // ll_spawn_ex
	Pid            func(p uint64, pid unsafe.Pointer) int32                                                 // ll_process_pid
	Pipe           func(p uint64, childFD int32, out unsafe.Pointer) int32                                  // ll_process_pipe
	SendSignal     func(p uint64, sig int32) int32                                                          // ll_process_send_signal
	Terminate      func(p uint64) int32                                                                     // ll_process_terminate
	Kill           func(p uint64) int32                                                                     // ll_process_kill
	ReturnCode     func(p uint64, out unsafe.Pointer) int32                                                 // ll_process_returncode
	Wait           func(p uint64, out unsafe.Pointer) int32                                                 // ll_process_wait
	AddSignal      func(loop uint64, sig int32, cb, arg uintptr) int32                                      // ll_add_signal_handler
	AddSignalEx    func(loop uint64, sig int32, cb, arg uintptr, out unsafe.Pointer) int32                  // ll_add_signal_handler_ex
	RemoveSignal   func(loop uint64, sig int32) int32                                                       // ll_remove_signal_handler
	TransportWrite func(t uint64, data unsafe.Pointer, n uintptr) int32                                     // ll_transport_write
	TransportClose func(t uint64) int32                                                                     // ll_transport_close
}

var rawProc struct {
	once sync.Once
	r    *RawProcess
	err  error
}

// RawProcess returns the process and signal functions, binding them on
// first use.
func (lib *Lib) RawProcess() (*RawProcess, error) {
	rawProc.once.Do(func() {
		h, err := purego.Dlopen(lib.Path, purego.RTLD_NOW|purego.RTLD_LOCAL) // the loaded library: same handle
		if err != nil {
			rawProc.err = err
			return
		}
		r := &RawProcess{}
		for _, s := range []struct {
			name string
			fptr any
		}{
			{"ll_spawn", &r.Spawn}, {"ll_spawn_ex", &r.SpawnEx}, {"ll_process_pid", &r.Pid}, {"ll_process_pipe", &r.Pipe},
			{"ll_process_send_signal", &r.SendSignal}, {"ll_process_terminate", &r.Terminate},
			{"ll_process_kill", &r.Kill}, {"ll_process_returncode", &r.ReturnCode},
			{"ll_process_wait", &r.Wait}, {"ll_add_signal_handler", &r.AddSignal},
			{"ll_add_signal_handler_ex", &r.AddSignalEx},
			{"ll_remove_signal_handler", &r.RemoveSignal}, {"ll_transport_write", &r.TransportWrite},
			{"ll_transport_close", &r.TransportClose},
		} {
			addr, err := purego.Dlsym(h, s.name)
			if err != nil || addr == 0 {
				rawProc.err = fmt.Errorf("libloop: %s has no symbol %s: %v", lib.Path, s.name, err)
				return
			}
			purego.RegisterFunc(s.fptr, addr)
		}
		rawProc.r = r
	})
	return rawProc.r, rawProc.err
}

// Stdio choices for ProcessOptions (LL_STDIO_*); an fd >= 0 is given to
// the child as it is.
const (
	StdioInherit = -1 // LL_STDIO_INHERIT: the child shares the parent's fd
	StdioPipe    = -2 // LL_STDIO_PIPE: a pipe; its events reach the Spawn func
	StdioDevNull = -3 // LL_STDIO_DEVNULL: /dev/null
	StdioStdout  = -4 // LL_STDIO_STDOUT: Stderr only, the same as the child's stdout
)

// Process flags (LL_PROCESS_*).
const (
	NewSession = 1 // LL_PROCESS_NEW_SESSION: setsid(), the child leads a new session
	NewGroup   = 2 // LL_PROCESS_NEW_GROUP: setpgid(0, 0), the child leads a new process group
)

// ProcessOptions says what to run. The zero value of Stdin, Stdout and
// Stderr is fd 0, so set each (StdioInherit, StdioPipe, ...).
type ProcessOptions struct {
	File                  string   // the program, searched in PATH (Env's PATH when it sets one) when it has no '/'; "" means Args[0]
	Args                  []string // argv, Args[0] included
	Env                   []string // "NAME=value"; nil inherits the host's environment
	Dir                   string   // "" inherits the working directory
	Stdin, Stdout, Stderr int
	Flags                 int         // NewSession, NewGroup
	Extra                 *SpawnExtra // pass fds, credentials, umask, group, pipe size (ll_spawn_ex); nil: none
}

// The kinds of ProcessEvent (LL_* of transport.h).
const (
	EventConnectionMade = 1 // a pipe is ready
	EventDataReceived   = 2 // Data holds bytes the child wrote to FD
	EventEOFReceived    = 3 // the child closed FD; return true to keep the transport open
	EventConnectionLost = 4 // the pipe is closed; Code is 0 or -errno. Last event of that pipe
	EventPauseWriting   = 5 // stdin's buffer is above its high-water mark
	EventResumeWriting  = 6 // stdin's buffer drained to its low-water mark
	EventProcessExited  = 9 // the child exited; Code is its return code
)

// ProcessEvent is one thing that happened to a child or one of its pipes.
type ProcessEvent struct {
	Kind      int
	Code      int    // EventConnectionLost: 0 or -errno; EventProcessExited: the return code
	FD        int    // the child's fd (0, 1, 2) of a pipe event; -1 for the exit
	Transport uint64 // the pipe's transport id; the process id for the exit
	// Data is a view of the library's read buffer: valid only until the
	// callback returns. Copy what you keep.
	Data []byte
}

// Process is a child started by Loop.Spawn (an ll_process id). Use it on
// the loop's thread. Release it when done; the child is not killed by that,
// and it is reaped whenever it exits (no zombie is left).
type Process struct {
	loop *Loop
	raw  *RawProcess
	id   uint64
	pid  int
	key  uintptr
}

// procEntry is a child's event func; it is dropped once the exit and
// every pipe's last event have been delivered and the Process released.
type procEntry struct {
	fn               func(ev ProcessEvent) bool
	pipes            int // pipes not yet lost
	exited, released bool
	loop             uint64
}

var procTable = struct {
	mu   sync.Mutex
	next uintptr
	m    map[uintptr]*procEntry
}{m: make(map[uintptr]*procEntry)}

var procTramp struct {
	once sync.Once
	p    uintptr
}

// procProtocolPtr returns the C address of the binding's ll_protocol_fn
// trampoline for processes.
func procProtocolPtr() uintptr {
	procTramp.once.Do(func() { procTramp.p = purego.NewCallback(procTrampoline) })
	return procTramp.p
}

func procTrampoline(loop uint64, ev unsafe.Pointer, arg uintptr) int32 {
	procTable.mu.Lock()
	e := procTable.m[arg]
	procTable.mu.Unlock()
	if e == nil || ev == nil {
		return 0
	}
	pe := readEvent(ev)
	keep := false
	guard(loop, func() { keep = e.fn(pe) })
	procTable.mu.Lock()
	switch pe.Kind {
	case EventConnectionMade:
		e.pipes++
	case EventConnectionLost:
		e.pipes--
	case EventProcessExited:
		e.exited = true
	}
	if e.exited && e.pipes <= 0 && e.released {
		delete(procTable.m, arg)
	}
	procTable.mu.Unlock()
	if keep {
		return 1
	}
	return 0
}

// readEvent copies an ll_event (laid out as transport.h declares it).
func readEvent(p unsafe.Pointer) ProcessEvent {
	type cEvent struct {
		kind, code, fd int32
		_              int32
		transport      uint64
		data           unsafe.Pointer
		len            uintptr
		addr           unsafe.Pointer
		addrlen        uint32
		result         int32
	}
	c := (*cEvent)(p)
	ev := ProcessEvent{Kind: int(c.kind), Code: int(c.code), FD: int(c.fd), Transport: c.transport}
	if c.data != nil && c.len > 0 {
		ev.Data = unsafe.Slice((*byte)(c.data), c.len)
	}
	return ev
}

// cOptions lays out an ll_process_options in C memory, with its strings
// and arrays; free releases all of it.
func cOptions(o *ProcessOptions) (opts unsafe.Pointer, free func(), err error) {
	var bufs []*CBuf
	free = func() {
		for _, b := range bufs {
			b.Free()
		}
	}
	str := func(s string) (uintptr, error) {
		b, err := NewCString(s)
		if err != nil {
			return 0, err
		}
		bufs = append(bufs, b)
		return uintptr(b.Ptr()), nil
	}
	strs := func(ss []string) (uintptr, error) {
		arr, err := NewCBuf(uintptr(len(ss)+1) * 8) // zeroed: NULL-terminated
		if err != nil {
			return 0, err
		}
		bufs = append(bufs, arr)
		ptrs := unsafe.Slice((*uintptr)(arr.Ptr()), len(ss)+1)
		for i, s := range ss {
			if ptrs[i], err = str(s); err != nil {
				return 0, err
			}
		}
		return uintptr(arr.Ptr()), nil
	}
	type cOpts struct {
		file, argv, env, cwd uintptr
		stdio                [3]int32
		flags                int32
	}
	b, err := NewCBuf(unsafe.Sizeof(cOpts{}))
	if err != nil {
		return nil, free, err
	}
	bufs = append(bufs, b)
	c := (*cOpts)(b.Ptr())
	file := o.File
	if file == "" && len(o.Args) > 0 {
		file = o.Args[0]
	}
	if c.file, err = str(file); err != nil {
		return nil, free, err
	}
	if len(o.Args) > 0 { // else NULL argv: the library's EINVAL
		if c.argv, err = strs(o.Args); err != nil {
			return nil, free, err
		}
	}
	if o.Env != nil {
		if c.env, err = strs(o.Env); err != nil {
			return nil, free, err
		}
	}
	if o.Dir != "" {
		if c.cwd, err = str(o.Dir); err != nil {
			return nil, free, err
		}
	}
	c.stdio = [3]int32{int32(o.Stdin), int32(o.Stdout), int32(o.Stderr)}
	c.flags = int32(o.Flags)
	return b.Ptr(), free, nil
}

// Spawn starts a child (asyncio's subprocess_exec). fn receives the events
// of its pipes and its exit (EventProcessExited, exactly once), on the
// loop's thread; for EventEOFReceived its result says whether to keep the
// pipe open. fn may be nil. A program that cannot run is an error here
// (matching syscall.ENOENT, EACCES, ENOTDIR), never a child exiting 127.
func (l *Loop) Spawn(o ProcessOptions, fn func(ev ProcessEvent) bool) (*Process, error) {
	r, err := l.lib.RawProcess()
	if err != nil {
		return nil, err
	}
	if fn == nil {
		fn = func(ProcessEvent) bool { return false }
	}
	opts, free, err := cOptions(&o)
	defer free()
	if err != nil {
		return nil, err
	}
	extra, freeExtra, err := cExtra(o.Extra)
	defer freeExtra()
	if err != nil {
		return nil, err
	}
	procTable.mu.Lock()
	procTable.next++
	key := procTable.next
	procTable.m[key] = &procEntry{fn: fn, loop: l.id}
	procTable.mu.Unlock()
	id, err := outCall(func(out unsafe.Pointer) int32 { return r.SpawnEx(l.id, opts, extra, procProtocolPtr(), key, out) })
	if err != nil {
		procTable.mu.Lock()
		delete(procTable.m, key)
		procTable.mu.Unlock()
		return nil, err
	}
	p := &Process{loop: l, raw: r, id: id, key: key}
	pid, err := outCall(func(out unsafe.Pointer) int32 { return r.Pid(id, out) })
	if err != nil {
		return nil, err
	}
	p.pid = int(int32(pid))
	return p, nil
}

// ID returns the ll_process id (0 after Release).
func (p *Process) ID() uint64 { return p.id }

// Pid returns the child's process id.
func (p *Process) Pid() int { return p.pid }

// ReturnCode returns the return code (the exit status, or -signal as
// asyncio's returncode) and true once the child has exited and the loop
// has seen it; 0 and false while it runs.
func (p *Process) ReturnCode() (int, bool, error) {
	v, err := outCall(func(out unsafe.Pointer) int32 { return p.raw.ReturnCode(p.id, out) })
	if err == ESTATE {
		return 0, false, nil
	}
	if err != nil {
		return 0, false, err
	}
	return int(int32(v)), true, nil
}

// Wait returns a future that finishes when the child exits (at once if it
// has); its value is the return code: read it with WaitResult. Release the
// future when done.
func (p *Process) Wait() (*Future, error) {
	return p.loop.newFuture(func(out unsafe.Pointer) int32 { return p.raw.Wait(p.id, out) })
}

// WaitResult reads the return code from a finished Wait future.
func WaitResult(f *Future) (int, error) {
	v, err := f.Result()
	return int(int64(v)), err
}

// Signal sends sig to the child. Once it has exited this fails with an
// error matching syscall.ESRCH and nothing is sent (a recycled pid is
// never signalled).
func (p *Process) Signal(sig syscall.Signal) error { return check(p.raw.SendSignal(p.id, int32(sig))) }

// Terminate sends SIGTERM.
func (p *Process) Terminate() error { return check(p.raw.Terminate(p.id)) }

// Kill sends SIGKILL.
func (p *Process) Kill() error { return check(p.raw.Kill(p.id)) }

// Pipe returns the transport id of the child's fd (0, 1, 2) when it is a
// pipe: EINVAL when it is not, ECLOSED once that pipe has closed.
func (p *Process) Pipe(fd int) (uint64, error) {
	return outCall(func(out unsafe.Pointer) int32 { return p.raw.Pipe(p.id, int32(fd), out) })
}

// WriteStdin writes data to the child's stdin pipe (ll_transport_write: it
// never blocks; what the pipe does not take at once is buffered, with
// EventPauseWriting / EventResumeWriting on fd 0).
func (p *Process) WriteStdin(data []byte) error {
	t, err := p.Pipe(0)
	if err != nil {
		return err
	}
	if len(data) == 0 {
		return check(p.raw.TransportWrite(t, nil, 0))
	}
	b, err := NewCBuf(uintptr(len(data)))
	if err != nil {
		return err
	}
	defer b.Free()
	copy(unsafe.Slice((*byte)(b.Ptr()), len(data)), data)
	return check(p.raw.TransportWrite(t, b.Ptr(), uintptr(len(data))))
}

// CloseStdin closes the child's stdin once its buffer is flushed: the
// child reads EOF.
func (p *Process) CloseStdin() error {
	t, err := p.Pipe(0)
	if err != nil {
		return err
	}
	return check(p.raw.TransportClose(t))
}

// Release drops the process id (ll_release). The child is not killed; its
// events still reach the Spawn func until its exit and its pipes' last
// events, after which the func is dropped. Releasing twice does nothing.
func (p *Process) Release() error {
	if p.id == 0 {
		return nil
	}
	if err := check(p.loop.raw().Release(p.id)); err != nil {
		return err
	}
	p.id = 0
	procTable.mu.Lock()
	if e := procTable.m[p.key]; e != nil {
		e.released = true
		// Nothing more will come: delivered already, or the loop is closed.
		if (e.exited && e.pipes <= 0) || p.loop.IsClosed() {
			delete(procTable.m, p.key)
		}
	}
	procTable.mu.Unlock()
	return nil
}

// LiveProcessCallbacks returns how many Spawn funcs the binding still
// holds: one per child whose exit or pipes are still to be delivered, or
// that was not released.
func LiveProcessCallbacks() int {
	procTable.mu.Lock()
	defer procTable.mu.Unlock()
	return len(procTable.m)
}
