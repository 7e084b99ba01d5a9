// SPDX-License-Identifier: MIT

package libloop

import (
	"slices"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// recordingHost runs host calls by recording their Arg, in order.
type recordingHost struct {
	buf []HostCall
	got []uintptr
	ids []uint64
}

func (d *recordingHost) Buffer(n int) []HostCall {
	if cap(d.buf) < n {
		d.buf = make([]HostCall, n)
	}
	return d.buf[:n]
}

func (d *recordingHost) Run(l *Loop, n int) {
	for _, fc := range d.buf[:n] {
		if fc.Fn != 0 {
			d.got = append(d.got, fc.Arg)
			d.ids = append(d.ids, fc.ID)
		}
	}
}

func (d *recordingHost) Call(l *Loop, fc HostCall) { d.got = append(d.got, fc.Arg) }

func (d *recordingHost) FutureDisposed(*Future) {}

// disposeHost is a Host that tells a test of each disposed future.
type disposeHost struct {
	recordingHost
	fn func(*Future)
}

func (h *disposeHost) FutureDisposed(f *Future) { h.fn(f) }

// watchDisposal calls fn for each of l's futures as it is disposed.
func watchDisposal(l *Loop, fn func(*Future)) { l.SetHost(&disposeHost{fn: fn}) }

// CallSoonHost without a handle keeps the loop's own plain calls by value
// and runs the others (another id, an fd call) with their own id; with a
// handle the call can be cancelled. All run in FIFO order.
func TestCallSoonHostHandleAndID(t *testing.T) {
	l := newTestLoop(t)
	d := &recordingHost{}
	l.SetHost(d)
	l.Tag = 5
	if _, err := l.CallSoonHost(HostCall{Arg: 1}, false); err != EINVAL {
		t.Fatalf("fn 0: %v", err)
	}
	mustNil := func(h *Handle, err error) {
		t.Helper()
		if err != nil || h != nil {
			t.Fatalf("no handle asked: %v, %v", h, err)
		}
	}
	mustNil(l.CallSoonHost(HostCall{Fn: 1, Arg: 1}, false))
	mustNil(l.CallSoonHost(HostCall{Fn: 1, Arg: 2, ID: 9}, false))
	h, err := l.CallSoonHost(HostCall{Fn: 1, Arg: 3}, true)
	if err != nil || h == nil {
		t.Fatalf("handle asked: %v, %v", h, err)
	}
	h.Cancel()
	mustNil(l.CallSoonHost(HostCall{Fn: 1, Arg: 4, ID: 5}, false))
	if l.ready.len() != 4 || l.ready.buf[l.ready.head].h != nil || l.ready.buf[l.ready.head+1].h == nil {
		t.Fatal("the loop's own call is not by value, or another id's is")
	}
	l.RunOnce(true)
	if !slices.Equal(d.got, []uintptr{1, 2, 4}) || !slices.Equal(d.ids, []uint64{5, 9, 5}) {
		t.Fatalf("ran %v with ids %v", d.got, d.ids)
	}
	l.Close()
	if _, err := l.CallSoonHost(HostCall{Fn: 1}, false); err != ECLOSED {
		t.Fatalf("closed loop: %v", err)
	}
}

// facesHost has the optional faces a Go test can drive without C: a host
// queue, a spawner and an environment of its own.
type facesHost struct {
	recordingHost
	runs    int
	more    bool
	spawned []string
	environ int
	paths   int
}

func (h *facesHost) RunHostQueue(l *Loop) bool { h.runs++; return h.more }

func (h *facesHost) Spawn(r *SpawnRequest) (int, int, error) {
	h.spawned = append(h.spawned, r.Path)
	return 0, -1, unix.ENOTSUP
}

func (h *facesHost) Environ() []string { h.environ++; return []string{"A=b"} }

func (h *facesHost) Getenv(key string) string {
	if key == "PATH" {
		h.paths++
		return "/bin:/usr/bin"
	}
	return ""
}

// hostOnly hides a host's other faces: SetHost finds only Host's methods
// and HostEnv's.
type hostOnly struct {
	Host
	HostEnv
}

// SetHost finds each optional face by type assertion, and the loop uses
// it: the host queue runs once per iteration while the host says it has
// work, Spawn goes to the host's Spawner with the host's PATH, and without
// a Spawner the inherited environment is the host's.
func TestHostFacesFoundAtSetHost(t *testing.T) {
	l := newTestLoop(t)
	h := &facesHost{more: true}
	l.SetHost(h)
	if err := l.RunOnce(true); err != nil || h.runs != 0 {
		t.Fatalf("ran the host queue %d times before HostReady (%v)", h.runs, err)
	}
	l.HostReady()
	l.RunOnce(true)
	l.RunOnce(true) // it said it has more
	h.more = false
	l.RunOnce(true)
	l.RunOnce(true) // it said it has no more
	if h.runs != 3 {
		t.Fatalf("host queue ran %d times, want 3", h.runs)
	}
	o := &ProcessOptions{File: "true", Argv: []string{"true"}, Stdio: [3]int{StdioDevNull, StdioDevNull, StdioDevNull}}
	if _, err := l.Spawn(o, nil); err != unix.ENOTSUP || len(h.spawned) != 1 || h.paths == 0 {
		t.Fatalf("Spawn: %v, the host's spawner saw %q, PATH read %d times", err, h.spawned, h.paths)
	}

	l2 := newTestLoop(t)
	h2 := &facesHost{}
	l2.SetHost(hostOnly{h2, h2})
	p, err := l2.Spawn(o, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(h2.spawned) != 0 || h2.environ != 1 {
		t.Fatalf("without a Spawner: the host's spawner saw %q, its environment was read %d times",
			h2.spawned, h2.environ)
	}
	for i := 0; i < 2000; i++ { // reap it
		if _, exited := p.ReturnCode(); exited {
			return
		}
		l2.RunOnce(true)
		time.Sleep(time.Millisecond)
	}
	t.Fatal("the child did not exit")
}
