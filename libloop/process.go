// SPDX-License-Identifier: MIT

package libloop

import (
	"slices"
	"strings"
	"sync/atomic"

	"golang.org/x/sys/unix"
)

// Stdio choices for ProcessOptions.Stdio; values match LL_STDIO_*. An fd
// >= 0 gives the child that fd.
const (
	StdioInherit = -1 // the child shares the parent's fd
	StdioPipe    = -2 // a pipe, served as a transport of the process
	StdioDevNull = -3 // /dev/null
	StdioStdout  = -4 // stderr only: the same as the child's stdout
)

// Process flags; values match LL_PROCESS_*.
const (
	ProcessNewSession = 1 // setsid: the child leads a new session
	ProcessNewGroup   = 2 // setpgid(0, 0): the child leads a new process group
)

// ProcessOptions says what to run and how (asyncio's subprocess_exec).
type ProcessOptions struct {
	File  string   // the program; searched in PATH when it has no '/'
	Argv  []string // argv[0] included
	Env   []string // "NAME=value"; nil inherits the parent's
	Dir   string   // "" inherits
	Stdio [3]int
	Flags int
	Extra *SpawnExtra // pass fds, credentials, umask, group, pipe size; nil: none
}

// Process is a child started by Spawn. Its pipes are transports whose
// events (with FD the child's fd) go to the process's protocol, and its
// exit is the event ProcessExited with the return code: the exit status,
// or -signal (asyncio's returncode). It is reaped by the loop, so no
// zombie is left behind.
type Process struct {
	loop       *Loop
	pid        int
	pidfd      int // -1 where the OS has none
	pipes      [3]*Transport
	proto      Protocol
	exited     bool
	returncode int
	// reaped is set by a goroutine that reaped the child (no pidfd, or the
	// loop closed first): its pid may be recycled from then on, so it
	// must not be signalled even before the loop hears of the exit.
	reaped  atomic.Bool
	waiters []func(int)
	unrefd  bool // does not keep the loop alive (refs.go)
	liveIdx int  // index in the loop's list of running processes (refs.go)
	// Tag is the host's id for this process, Data is free for the host.
	Tag  uint64
	Data any
}

// Spawn starts a child, vfork-style and straight to exec (no fork hazards
// in a process with a Go runtime). The child gets its stdio and nothing
// else: every other fd is closed in it (Python's close_fds=True), unless
// o.Extra passes fds or inherits them. A program that cannot run is an
// error here (ENOENT, EACCES, ENOTDIR; EPERM from the extras' setuid ...),
// not a child that exits 127. Bad extras are EINVAL, a pass fd that is not
// open EBADF, an extra the platform cannot do ENOTSUP.
func (l *Loop) Spawn(o *ProcessOptions, proto Protocol) (*Process, error) {
	if l.closed.Load() {
		return nil, ECLOSED
	}
	if o == nil || o.File == "" || len(o.Argv) == 0 || o.Flags&^(ProcessNewSession|ProcessNewGroup) != 0 {
		return nil, EINVAL
	}
	// Flags and extras first: a pass fd's number must be checked before a
	// pipe made below could take it.
	req, err := spawnRequest(o)
	if err != nil {
		return nil, err
	}
	if req.Path, err = l.spawn.lookPath(o.File, o.Env); err != nil {
		return nil, err
	}
	p := &Process{loop: l, pidfd: -1, proto: proto}
	child, parent, err := l.spawn.stdioFDs(o.Stdio, req.PipeSize)
	defer closeAll(child[:], o.Stdio)
	if err != nil {
		closeAll(parent[:], allPipes)
		return nil, err
	}
	req.Stdio = child
	moved, err := uncross(&req.Stdio)
	for _, fd := range moved {
		defer unix.Close(fd)
	}
	var pid int
	if err == nil && l.spawn.spawner != nil {
		// Env nil: the spawner passes the host's own environment on as
		// it is, with no copy.
		pid, p.pidfd, err = l.spawn.spawner.Spawn(req)
	} else if err == nil {
		if req.Env == nil {
			req.Env = l.spawn.environ()
		}
		pid, err = forkExec(req, &p.pidfd)
	}
	if err != nil {
		closeAll(parent[:], allPipes)
		return nil, err
	}
	p.pid = pid
	for i, fd := range parent {
		if fd < 0 {
			continue
		}
		kind := PipeRead
		if i == 0 {
			kind = PipeWrite
		}
		t := l.newTransport(fd, kind, false, proto)
		t.evFD = int32(i)
		p.pipes[i] = t
		if err := t.start(); err != nil {
			t.Refuse()
			p.pipes[i] = nil
		}
	}
	l.processStarted(p)
	p.watchExit()
	return p, nil
}

// lookPath finds file in the PATH of env (or the parent's), as execvp.
// A path with a '/' is not checked here: the exec itself reports ENOENT,
// EACCES or ENOTDIR (both ForkExec and posix_spawn return its error).
func (s *spawnState) lookPath(file string, env []string) (string, error) {
	if strings.Contains(file, "/") {
		return file, nil
	}
	// The env's PATH when it sets one (the first, as getenv finds it in
	// the child); else the parent's.
	path := s.getenv("PATH")
	for _, kv := range env {
		if strings.HasPrefix(kv, "PATH=") {
			path = kv[5:]
			break
		}
	}
	var firstErr error = unix.ENOENT
	for _, dir := range strings.Split(path, ":") {
		if dir == "" {
			dir = "."
		}
		full := dir + "/" + file
		err := checkExecutable(full)
		if err == nil {
			return full, nil
		}
		if err == unix.EACCES && firstErr == unix.ENOENT {
			firstErr = err // found, but not executable: say so if nothing better turns up
		}
	}
	return "", firstErr
}

func checkExecutable(path string) error {
	var st unix.Stat_t
	if err := unix.Stat(path, &st); err != nil {
		return err
	}
	if st.Mode&unix.S_IFMT == unix.S_IFDIR {
		return unix.EACCES
	}
	return unix.Access(path, unix.X_OK)
}

// stdioFDs makes the child's fds 0..2 and the parent's pipe ends, each
// pipe sized pipeSize when that is not 0.
func (st *spawnState) stdioFDs(stdio [3]int, pipeSize int) (child, parent [3]int, err error) {
	parent = [3]int{-1, -1, -1}
	child = [3]int{-1, -1, -1}
	// The host's fds first, before any pipe is made: a closed one is
	// EBADF, and a pipe made below could otherwise take its number (the
	// child would get the pipe, and closeAll, taking it for the host's,
	// would leak it; found by FuzzSpawnOptions).
	for _, s := range stdio {
		if s >= 0 {
			if _, err = unix.FcntlInt(uintptr(s), unix.F_GETFD, 0); err != nil {
				return
			}
		}
	}
	for i, s := range stdio {
		switch {
		case s >= 0:
			child[i] = s
		case s == StdioInherit:
			child[i] = i
		case s == StdioDevNull:
			child[i], err = st.devNull()
		case s == StdioPipe:
			var p [2]int
			if err = cloexecPipe(p[:]); err == nil {
				if i == 0 {
					child[i], parent[i] = p[0], p[1]
				} else {
					child[i], parent[i] = p[1], p[0]
				}
				// The parent's end is a transport: a write or read must
				// never block the loop (the child's end stays blocking,
				// as programs expect; the two ends are separate files).
				err = unix.SetNonblock(parent[i], true)
				if err == nil && pipeSize > 0 {
					err = setPipeSize(parent[i], pipeSize)
				}
			}
		case s == StdioStdout && i == 2:
			child[i] = child[1]
		default:
			err = EINVAL
		}
		if err != nil {
			return
		}
	}
	return
}

// allPipes is the stdio of a child's parent ends for closeAll: every one
// the library's (a zero would mean "the host's fd 0", and keep it open).
var allPipes = [3]int{StdioPipe, StdioPipe, StdioPipe}

// closeAll closes the fds the library opened for one child (not the
// host's, not the inherited ones, not a duplicate of stdout, not the
// loop's /dev/null), each once.
func closeAll(fds []int, stdio [3]int) {
	for i, fd := range fds {
		if fd < 0 || stdio[i] >= 0 || stdio[i] == StdioInherit || stdio[i] == StdioStdout || stdio[i] == StdioDevNull {
			continue
		}
		if slices.Contains(fds[:i], fd) {
			continue
		}
		unix.Close(fd)
	}
}

// Loop returns the process's loop.
func (p *Process) Loop() *Loop { return p.loop }

// Pid returns the child's process id.
func (p *Process) Pid() int { return p.pid }

// Pipe returns the transport of the child's fd (0, 1 or 2), or nil.
func (p *Process) Pipe(fd int) *Transport {
	if fd < 0 || fd > 2 {
		return nil
	}
	return p.pipes[fd]
}

// ReturnCode returns the return code once the child has exited.
func (p *Process) ReturnCode() (int, bool) { return p.returncode, p.exited }

// OnExit calls fn with the return code when the child exits (in a later
// callback if it already has).
func (p *Process) OnExit(fn func(code int)) {
	if p.exited {
		rc := p.returncode
		p.loop.CallSoon(func() { fn(rc) })
		return
	}
	p.waiters = append(p.waiters, fn)
}

// SendSignal sends sig to the child; once it has exited that is ESRCH,
// and a recycled pid is never signalled.
func (p *Process) SendSignal(sig int) error {
	if sig < 0 || sig > 64 {
		return EINVAL
	}
	if p.exited || p.reaped.Load() {
		return unix.ESRCH
	}
	return p.signal(sig)
}

// exit records the return code, queues ProcessExited, and wakes waiters.
func (p *Process) exit(code int) {
	if p.exited {
		return
	}
	p.exited, p.returncode = true, code
	p.exitedRefs()
	p.loop.emit(Event{Kind: ProcessExited, Code: code, FD: -1, P: p})
	ws := p.waiters
	p.waiters = nil
	for _, fn := range ws {
		fn(code)
	}
}

// exitCode turns a wait status into asyncio's returncode.
func exitCode(ws unix.WaitStatus) int {
	if ws.Signaled() {
		return -int(ws.Signal())
	}
	return ws.ExitStatus()
}
