// SPDX-License-Identifier: MIT

package tests

import (
	"testing"

	ll "github.com/libloop/libloop/bindings/go"
	"golang.org/x/sys/unix"
)

const cStream = 1 // LL_STREAM

// The raw batch path: transports with a NULL protocol fn deliver a whole
// iteration's events to the loop's batch sink in one call, each with its
// transport id, data and kind; the sink's EOF answers are obeyed; and a
// transport given a protocol fn leaves the batch.
func TestEventBatchPath(t *testing.T) {
	loop := newRawLoop(t)
	type rec struct {
		kind ll.EventKind
		id   uint64
		data string
	}
	var calls [][]rec
	keepOpen := map[uint64]bool{}
	key := ll.RegisterEventBatch(func(lp uint64, evs ll.EventBatch) {
		if lp != loop {
			t.Errorf("batch for loop %#x, want %#x", lp, loop)
		}
		var c []rec
		for i := 0; i < evs.Len(); i++ {
			ev := evs.At(i)
			c = append(c, rec{ev.Kind(), ev.TransportID(), string(ev.Data())})
			if ev.Kind() == ll.EOFReceived && keepOpen[ev.TransportID()] {
				ev.SetResult(1)
			}
		}
		calls = append(calls, c)
	})
	defer ll.Unregister(key)
	expect(t, "ll_loop_set_event_batch", raw.SetEventBatch(loop, ll.EventBatchPtr(), key), 0)

	const n = 6
	ids := make([]uint64, n)
	peers := make([]int, n)
	out := newOut(t)
	for i := range ids {
		a, b := socketpair(t)
		fd, err := unix.Dup(a) // the transport owns and closes its fd
		if err != nil {
			t.Fatal(err)
		}
		expect(t, "ll_transport_open", raw.TransportOpen(loop, int32(fd), cStream, 0, 0, out.Ptr()), 0)
		ids[i], peers[i] = out.Value(), b
		keepOpen[ids[i]] = i%2 == 0
		unix.Close(a)
	}
	expect(t, "run", raw.RunOnce(loop, cRunNowait), 0)
	if len(calls) != 1 || len(calls[0]) != n {
		t.Fatalf("ConnectionMade of %d transports came in calls %v, want one call of %d", n, calls, n)
	}
	for i, r := range calls[0] {
		if r.kind != ll.ConnectionMade || r.id != ids[i] {
			t.Errorf("event %d: %+v, want ConnectionMade of %#x", i, r, ids[i])
		}
	}

	// One byte per transport: one batch of n DataReceived.
	calls = nil
	for i, p := range peers {
		unix.Write(p, []byte{byte('a' + i)})
	}
	expect(t, "run", raw.RunOnce(loop, cRunOnce), 0)
	got := map[uint64]string{}
	for _, c := range calls {
		for _, r := range c {
			if r.kind == ll.DataReceived {
				got[r.id] += r.data
			}
		}
	}
	if len(calls) != 1 || len(got) != n {
		t.Fatalf("data came in %d calls for %d transports: %v", len(calls), len(got), calls)
	}
	for i, id := range ids {
		if got[id] != string(rune('a'+i)) {
			t.Errorf("transport %d got %q", i, got[id])
		}
	}

	// Transport 1 leaves the batch for a protocol fn of its own.
	var own []ll.EventKind
	pkey := ll.RegisterProtocolFn(func(lp uint64, ev ll.Event) int {
		own = append(own, ev.Kind())
		return 0
	})
	defer ll.Unregister(pkey)
	expect(t, "ll_transport_set_protocol", raw.TransportSetProtocol(ids[1], ll.ProtocolFnPtr(), pkey), 0)

	// Every peer shuts down: even transports stay open for writing (their
	// EOF answer was 1), odd ones close.
	calls = nil
	for _, p := range peers {
		unix.Shutdown(p, unix.SHUT_WR)
	}
	for range 5 {
		raw.RunOnce(loop, cRunNowait)
	}
	lost := map[uint64]bool{}
	for _, c := range calls {
		for _, r := range c {
			if r.id == ids[1] {
				t.Errorf("transport with its own protocol fn reached the batch: %+v", r)
			}
			if r.kind == ll.ConnectionLost {
				lost[r.id] = true
			}
		}
	}
	if len(own) != 2 || own[0] != ll.EOFReceived || own[1] != ll.ConnectionLost {
		t.Errorf("own protocol fn got %v, want [EOF, lost] (it answered 0)", own)
	}
	for i, id := range ids {
		if i == 1 {
			continue
		}
		if lost[id] == keepOpen[id] {
			t.Errorf("transport %d (keep open %v): lost %v", i, keepOpen[id], lost[id])
		}
		if keepOpen[id] {
			msg := []byte("still writing")
			c, _ := ll.NewCString(string(msg))
			rc := raw.TransportWrite(id, c.Ptr(), uintptr(len(msg)))
			c.Free()
			expect(t, "write after a kept-open EOF", rc, 0)
			buf := make([]byte, 32)
			if k, err := unix.Read(peers[i], buf); err != nil || string(buf[:k]) != string(msg) {
				t.Errorf("peer %d read %q, %v", i, buf[:max(k, 0)], err)
			}
			raw.TransportAbort(id)
		}
	}
	raw.RunOnce(loop, cRunNowait)
}
