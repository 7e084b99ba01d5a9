// SPDX-License-Identifier: MIT

package libloop

// Read events a protocol must not see. The reads of one iteration are all
// made before any of their events is delivered (events.go), so a protocol
// may pause, close or abort another transport whose bytes were read
// already. asyncio's pause_reading, close and abort remove the reader,
// which cancels the read callback queued for that iteration: the protocol
// hears nothing more. So here: at delivery, a read event (DataReceived,
// DatagramReceived, EOFReceived) of a transport that is not open, or is
// paused, or still holds older withheld reads, is withheld. A closed
// transport's are dropped (asyncio drops unread data on close); a paused
// one's are copied out of the shared read buffer and delivered again after
// ResumeReading, before anything read later (a transport replays its held
// reads before it reads again, ioReady).
//
// A host that delivers in batches learns of state changes only between the
// events it hands over: its ReadWatcher hears, at every change, whether a
// transport's read events may be delivered now, and a host sink that meets
// one it may not deliver marks it with Withhold.

// heldRead is a withheld read event: its kind and a copy of its bytes.
type heldRead struct {
	kind       EventKind
	data, addr []byte
}

// evReplay asks ioReady to deliver a resumed transport's held reads; the
// selector never reports it.
const evReplay uint8 = 0x80

// Withhold marks an event handed to an EventSink as not delivered: its
// transport was paused, closed or aborted meanwhile (by an earlier event of
// the same batch). The loop then treats it as it treats one it withheld
// itself; only read events can be withheld.
func (ev *Event) Withhold() {
	if ev.isRead() {
		ev.withheld = true
		// Counted as a stop, so that delivery looks at the sink's marks
		// even if a sink withheld what the core would have delivered.
		ev.T.loop.io.readStops++
	}
}

// isRead reports whether ev carries what a read found.
func (ev *Event) isRead() bool {
	switch ev.Kind {
	case DataReceived, DatagramReceived, EOFReceived:
		return ev.T != nil
	}
	return false
}

// ReadsDelivered reports whether the transport's read events may be
// delivered now: it is open, not paused, and holds no withheld reads (those
// go first).
func (t *Transport) ReadsDelivered() bool {
	return t.state == tOpen && !t.readPaused && !t.hasHeld
}

// syncRead reports t's ReadsDelivered to the host's ReadWatcher (host.go).
// It is called at every
// point where ReadsDelivered may change (PauseReading, ResumeReading,
// close, finish, loopClosing, withhold, replayHeld, startTLS: every write
// of state, readPaused and hasHeld), so it also counts the stops for
// delivery (readStops: events.go, deliverQueued).
func (t *Transport) syncRead() {
	delivered := t.ReadsDelivered()
	if !delivered {
		t.loop.io.readStops++
	}
	if w := t.loop.io.reads; w != nil {
		w.ReadsChanged(t, delivered)
	}
}

// withhold takes a read event that was not delivered: a paused transport
// keeps a copy (the shared buffer is reused once the batch is done), a
// closed one drops it. A transport resumed meanwhile replays at its next
// turn.
func (l *Loop) withhold(ev *Event) {
	ev.withheld = true
	t := ev.T
	if t.state != tOpen {
		return
	}
	if l.io.held == nil {
		l.io.held = make(map[*Transport][]heldRead)
	}
	h := heldRead{kind: ev.Kind}
	if len(ev.Data) > 0 {
		h.data = append([]byte(nil), ev.Data...)
	}
	if len(ev.Addr) > 0 {
		h.addr = append([]byte(nil), ev.Addr...)
	}
	l.io.held[t] = append(l.io.held[t], h)
	if !t.hasHeld {
		t.hasHeld = true
		t.syncRead()
		if !t.readPaused {
			l.queueIO(t, evReplay)
		}
	}
}

// dropHeld forgets t's withheld reads (it is closing: nobody will read them).
func (t *Transport) dropHeld() {
	if t.hasHeld {
		delete(t.loop.io.held, t)
		t.hasHeld = false
	}
}

// takeHeld removes and returns t's withheld reads.
func (t *Transport) takeHeld() []heldRead {
	if !t.hasHeld {
		return nil
	}
	held := t.loop.io.held[t]
	delete(t.loop.io.held, t)
	t.hasHeld = false
	return held
}

// replayHeld emits t's withheld reads again, in order, their bytes back in
// the shared read buffer. Should t be paused or closed again while they are
// delivered, delivery withholds the rest once more.
func (t *Transport) replayHeld() {
	held := t.takeHeld()
	t.syncRead()
	l := t.loop
	for i := range held {
		h := &held[i]
		ev := Event{Kind: h.kind, FD: int(t.evFD), T: t}
		if len(h.data) > 0 || len(h.addr) > 0 {
			l.readChunk() // room for one read: a held read was one
			ev.Data = l.consume(copy(l.io.rbuf[l.io.rused:], h.data))
			if len(h.addr) > 0 {
				ev.Addr = l.consume(copy(l.io.rbuf[l.io.rused:], h.addr))
			}
		}
		l.emit(ev)
	}
}
