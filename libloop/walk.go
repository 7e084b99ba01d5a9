// SPDX-License-Identifier: MIT

package libloop

import (
	"slices"

	"github.com/libloop/libloop/internal/timers"
)

// Walking the loop's objects, libuv's uv_walk: Walk calls a function for
// every live timer, hook, transport, server, process and signal handler of
// the loop, and for the objects of every ObjectSource (kinds the core does
// not keep itself: a host's own timers).

// WalkKind says what Walk hands over; the values are the C API's LL_KIND_*.
type WalkKind int

const (
	// WalkHandle: a pending one-shot timer (*Handle of CallLater/CallAt).
	WalkHandle WalkKind = 1
	// WalkTimer: an armed repeating timer (*Timer).
	WalkTimer WalkKind = 2
	// WalkTransport: a transport not yet lost (*Transport).
	WalkTransport WalkKind = 3
	// WalkServer: a server still serving (*Server).
	WalkServer WalkKind = 4
	// WalkProcess: a process that has not exited (*Process).
	WalkProcess WalkKind = 5
	// WalkSignal: a signal handler (Signal: its signal number).
	WalkSignal WalkKind = 6
	// WalkHook: an active hook (*Hook).
	WalkHook WalkKind = 7
	// WalkFSWatch: an active file-system watcher (*FSWatcher).
	WalkFSWatch WalkKind = 8
)

// Signal is what Walk hands over for a signal handler: its signal number.
type Signal int

// ObjectSource is a kind of object the core does not keep itself, plugged
// into a loop with AddObjectSource (a host's timers kept outside the core): Walk lists its objects, and Alive counts those
// that keep the loop alive.
type ObjectSource interface {
	// Walk appends the source's live objects to list.
	Walk(list []WalkEntry) []WalkEntry
	// Alive is how many of them keep the loop alive (referenced and
	// active) beyond what the core counts itself (refs.go).
	Alive() int
}

// WalkEntry is one object listed by Walk.
type WalkEntry struct {
	Kind WalkKind
	Obj  any
	seq  uint64 // a *Handle's sequence when listed: records are recycled
}

// walkState is what Walk needs beside the loop's own structures.
type walkState struct {
	// timers lists the Timers armed since the last walk; a walk drops the
	// ones no longer armed (arming one that is listed costs a flag test).
	timers []*Timer
	snap   []WalkEntry // the last snapshot's array, reused
	depth  int         // walks in progress (a walk from a walk's fn)
}

// listTimer records a Timer armed for the first time since a walk.
func (l *Loop) listTimer(t *Timer) {
	t.listed = true
	l.walk.timers = append(l.walk.timers, t)
}

// AddObjectSource plugs a kind of object into Walk and Alive.
func (l *Loop) AddObjectSource(s ObjectSource) { l.sources = append(l.sources, s) }

// Walk calls fn for every live object of the loop, kind by kind in
// WalkKind order (an ObjectSource's among them) until fn returns false. It walks a snapshot taken
// first: fn may close, cancel or stop the object it is given or any other
// (an object ended by an earlier call is skipped, one made during the walk
// is not listed). Called on the loop's thread.
func (l *Loop) Walk(fn func(kind WalkKind, obj any) bool) {
	if l.closed.Load() {
		return
	}
	snap := l.snapshot()
	defer l.doneWalk(snap)
	for _, e := range snap {
		if !l.stillLive(e) {
			continue
		}
		if !fn(e.Kind, e.Obj) {
			return
		}
	}
}

// snapshot lists the loop's live objects.
func (l *Loop) snapshot() []WalkEntry {
	var list []WalkEntry
	if l.walk.depth == 0 {
		list = l.walk.snap[:0]
	}
	l.walk.depth++
	kept := l.walk.timers[:0]
	var fires map[*Handle]bool // the armed Timers' handles: a Timer is listed as itself
	for _, t := range l.walk.timers {
		if !t.Active() {
			t.listed = false
			continue
		}
		kept = append(kept, t)
		if fires == nil {
			fires = make(map[*Handle]bool)
		}
		fires[t.h] = true
	}
	clear(l.walk.timers[len(kept):])
	l.walk.timers = kept
	l.timers.q.Each(func(e *timers.Entry[*Handle]) {
		if h := e.Val; !h.cancelled && !fires[h] {
			list = append(list, WalkEntry{Kind: WalkHandle, Obj: h, seq: h.seq})
		}
	})
	for _, t := range kept {
		list = append(list, WalkEntry{Kind: WalkTimer, Obj: t})
	}
	var servers []*Server
	l.fds.each(func(fd int32, w *fdWatch) {
		switch o := w.owner.(type) {
		case *Transport:
			list = append(list, WalkEntry{Kind: WalkTransport, Obj: o})
		case *listenSocket:
			servers = append(servers, o.srv)
		}
	})
	for i, s := range servers {
		if !slices.Contains(servers[:i], s) { // a server's sockets may be many
			list = append(list, WalkEntry{Kind: WalkServer, Obj: s})
		}
	}
	for _, p := range l.refs.live {
		list = append(list, WalkEntry{Kind: WalkProcess, Obj: p})
	}
	for sig := 1; sig < 65; sig++ { // in signal order, not the map's
		if l.signals.handlers[sig] != nil {
			list = append(list, WalkEntry{Kind: WalkSignal, Obj: Signal(sig)})
		}
	}
	for i := range l.hooks.lists {
		for _, h := range l.hooks.lists[i] {
			list = append(list, WalkEntry{Kind: WalkHook, Obj: h})
		}
	}
	for w := range l.fsw.all {
		list = append(list, WalkEntry{Kind: WalkFSWatch, Obj: w})
	}
	n := len(list)
	for _, s := range l.sources {
		list = s.Walk(list)
	}
	if len(list) > n { // a source's kinds go among the core's, in kind order
		slices.SortStableFunc(list, func(a, b WalkEntry) int { return int(a.Kind - b.Kind) })
	}
	return list
}

// doneWalk keeps the snapshot's array for the next walk, without the
// pointers it held.
func (l *Loop) doneWalk(snap []WalkEntry) {
	l.walk.depth--
	if l.walk.depth == 0 {
		clear(snap)
		l.walk.snap = snap[:0]
	}
}

// stillLive reports whether a snapshot's object is still live when its
// turn comes (an earlier call may have ended it).
func (l *Loop) stillLive(e WalkEntry) bool {
	if l.closed.Load() {
		return false
	}
	switch o := e.Obj.(type) {
	case *Handle:
		return o.seq == e.seq && o.inHeap && !o.cancelled
	case *Timer:
		return o.Active()
	case *Transport:
		return o.state != tClosed
	case *Server:
		return !o.closed
	case *Process:
		return !o.exited
	case Signal:
		return l.signals.handlers[int(o)] != nil
	case *Hook:
		return o.active
	case *FSWatcher:
		return o.active
	case interface{ Live() bool }:
		return o.Live()
	}
	return true
}
