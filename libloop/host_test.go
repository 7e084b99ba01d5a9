// SPDX-License-Identifier: MIT

package libloop

import (
	"slices"
	"testing"
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
