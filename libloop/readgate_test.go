// SPDX-License-Identifier: MIT

//go:build linux

package libloop

import (
	"math"
	"testing"

	"golang.org/x/sys/unix"
)

// gatingSink is a ReadGater that records the gates it is offered; on, if
// set, plays the host's gate after the delivery (fills the outcome).
type gatingSink struct {
	checkingSink
	offers []ReadGate
	on     func(g *ReadGate)
}

func (s *gatingSink) DeliverGated(l *Loop, evs []Event, g *ReadGate) {
	s.Deliver(l, evs)
	s.offers = append(s.offers, *g)
	if s.on != nil {
		s.on(g)
	}
}

// gateRig is a loop whose host is a gatingSink, two host transports on
// socketpairs, and the events they heard; every delivery stops the loop.
type gateRig struct {
	l     *Loop
	s     *gatingSink
	trs   [2]*Transport
	peers [2]int
	got   []EventKind
	lost  []int
}

func newGateRig(t *testing.T) *gateRig {
	r := &gateRig{l: newTestLoop(t)} // (epoll: a selector polled elsewhere)
	r.s = &gatingSink{checkingSink: checkingSink{buf: make([]byte, readBufferSize), deliver: func(ev *Event) {
		r.got = append(r.got, ev.Kind)
		if ev.Kind == ConnectionLost {
			r.lost = append(r.lost, ev.Code)
		}
		r.l.Stop()
	}}}
	r.l.SetHost(r.s)
	r.trs, r.peers = peerPair(t, r.l, func(int) Protocol { return nil })
	for range 3 { // their ConnectionMade
		r.l.RunOnce(true)
	}
	r.got = nil
	return r
}

// send makes transport i readable.
func (r *gateRig) send(t *testing.T, i int) {
	t.Helper()
	if _, err := unix.Write(r.peers[i], []byte("x")); err != nil {
		t.Fatal(err)
	}
}

// A delivery of data that ends the iteration under RunForever or
// RunUntilComplete is offered the gate, with the terms the host needs.
func TestReadGateOffered(t *testing.T) {
	r := newGateRig(t)
	r.send(t, 0)
	if err := r.l.RunForever(); err != nil {
		t.Fatal(err)
	}
	if len(r.s.offers) != 1 {
		t.Fatalf("%d offers, want 1 (events %v)", len(r.s.offers), r.got)
	}
	g := r.s.offers[0]
	if g.Deadline != math.MaxInt64-1 || g.MaxIterations != maxChain || g.ReadMax != maxReadChunk ||
		g.View != r.l.view() || g.Poll.Fd < 0 || g.Polled != -1 {
		t.Fatalf("terms %+v", g)
	}

	// A timer bounds the gate: it must hand back once the timer is due.
	h, err := r.l.CallLater(3600, func() {})
	if err != nil {
		t.Fatal(err)
	}
	defer h.Cancel()
	f, _ := r.l.NewFuture()
	r.s.deliver = func(ev *Event) { r.got = append(r.got, ev.Kind); f.SetResult(0, nil) }
	r.send(t, 1)
	if err := r.l.RunUntilComplete(f); err != nil {
		t.Fatal(err)
	}
	if len(r.s.offers) != 2 {
		t.Fatalf("%d offers, want 2", len(r.s.offers))
	}
	if d := r.s.offers[1].Deadline; d != r.l.timers.peek().Val.when-1 {
		t.Fatalf("deadline %d, the timer's %d", d, r.l.timers.peek().Val.when)
	}
}

// Where the loop's next iteration is not the gate's to run, no gate is
// offered: one iteration (RunOnce), liveness asked between iterations
// (RunDefault), a hook, debug mode, an event other than data in the
// delivery, a callback ready.
func TestReadGateNotOffered(t *testing.T) {
	cases := map[string]func(t *testing.T, r *gateRig) error{
		"RunOnce": func(t *testing.T, r *gateRig) error {
			r.send(t, 0)
			return r.l.RunOnce(false)
		},
		"RunDefault": func(t *testing.T, r *gateRig) error {
			r.send(t, 0)
			_, err := r.l.Run(RunModeDefault)
			return err
		},
		"hook": func(t *testing.T, r *gateRig) error {
			if _, err := r.l.AddHook(HookCheck, func() {}); err != nil {
				t.Fatal(err)
			}
			r.send(t, 0)
			return r.l.RunForever()
		},
		"debug": func(t *testing.T, r *gateRig) error {
			r.l.SetDebug(true)
			r.send(t, 0)
			return r.l.RunForever()
		},
		"EOF in the delivery": func(t *testing.T, r *gateRig) error {
			n := copy(r.l.readChunk(), "x")
			r.l.emit(Event{Kind: DataReceived, FD: -1, T: r.trs[0], Data: r.l.consume(n)})
			r.l.emit(Event{Kind: EOFReceived, FD: -1, T: r.trs[1]})
			return r.l.RunForever()
		},
		"callback ready": func(t *testing.T, r *gateRig) error {
			r.s.deliver = func(ev *Event) {
				r.got = append(r.got, ev.Kind)
				r.l.CallSoon(func() { r.l.Stop() })
			}
			n := copy(r.l.readChunk(), "x")
			r.l.emit(Event{Kind: DataReceived, FD: -1, T: r.trs[0], Data: r.l.consume(n)})
			r.l.CallSoon(func() {}) // after the delivery's mark: ready when it runs
			return r.l.RunForever()
		},
	}
	for name, run := range cases {
		t.Run(name, func(t *testing.T) {
			r := newGateRig(t)
			if err := run(t, r); err != nil {
				t.Fatal(err)
			}
			if len(r.got) == 0 {
				t.Fatal("nothing delivered")
			}
			if len(r.s.offers) != 0 {
				t.Fatalf("offered %d gates", len(r.s.offers))
			}
		})
	}
}

// What the host's gate ran counts as the loop's iterations, and a read
// error it met ends that transport as the loop's own read would.
func TestReadGateOutcome(t *testing.T) {
	r := newGateRig(t)
	r.s.on = func(g *ReadGate) {
		g.Iterations, g.Events = 3, 3
		g.Failed, g.Errno = r.trs[1], unix.ECONNRESET
	}
	iter := r.l.iter
	r.send(t, 0)
	if err := r.l.RunForever(); err != nil {
		t.Fatal(err)
	}
	if got := r.l.iter - iter; got < 4 {
		t.Fatalf("%d iterations counted, want the gate's 3 and more", got)
	}
	r.s.on = nil
	for range 3 {
		r.l.RunOnce(true)
	}
	if len(r.lost) != 1 || r.lost[0] != Code(unix.ECONNRESET) {
		t.Fatalf("ConnectionLost codes %v, want one %d", r.lost, Code(unix.ECONNRESET))
	}
	if r.trs[0].IsClosing() || !r.trs[1].IsClosing() {
		t.Fatal("the error ended the wrong transport")
	}
}

// The gate is offered while the poll plan rests tries too (a server whose
// peer is in another process: its polls block, and they may block in the
// gate), with the terms of its polls: a try first only while tries run,
// blocking no later than the loop's next turn for the Go scheduler; the
// time the host's polls blocked counts as the loop's idle time.
func TestReadGateBlockingTerms(t *testing.T) {
	r := newGateRig(t)
	for _, rest := range []bool{false, true} {
		r.s.offers = nil
		if rest {
			r.l.plan.tries, r.l.plan.rest = triesRest, maxRest // past this run's blocking poll
		} else {
			r.l.plan.tries = triesOn
		}
		r.send(t, 0)
		if err := r.l.RunForever(); err != nil {
			t.Fatal(err)
		}
		if len(r.s.offers) != 1 {
			t.Fatalf("rest %v: %d offers, want 1", rest, len(r.s.offers))
		}
		g := r.s.offers[0]
		if g.TryFirst == rest || g.BlockUntil != r.l.lastYield+yieldSlice {
			t.Fatalf("rest %v: TryFirst %v BlockUntil %d, want %v and %d", rest, g.TryFirst, g.BlockUntil,
				!rest, r.l.lastYield+yieldSlice)
		}
	}

	idle := r.l.Stats().Idle
	r.s.on = func(g *ReadGate) { g.Iterations, g.IdleNs = 1, 7e6 }
	r.send(t, 1)
	if err := r.l.RunForever(); err != nil {
		t.Fatal(err)
	}
	if d := r.l.Stats().Idle - idle; d < 7e6 {
		t.Fatalf("idle grew by %v, want the host's 7ms at least", d)
	}
}
