// SPDX-License-Identifier: MIT

package libloop

import (
	"crypto/tls"
	"net"
	"os"
	"slices"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// peerPair opens two stream transports on socketpairs with Go protocols;
// the test writes to peers[i] to make transport i readable.
func peerPair(t *testing.T, l *Loop, proto func(i int) Protocol) (trs [2]*Transport, peers [2]int) {
	t.Helper()
	for i := range 2 {
		fds, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_STREAM, 0)
		if err != nil {
			t.Fatal(err)
		}
		unix.SetNonblock(fds[0], true)
		tr, err := l.OpenTransport(fds[0], Stream, proto(i))
		if err != nil {
			t.Fatal(err)
		}
		trs[i], peers[i] = tr, fds[1]
		t.Cleanup(func() { unix.Close(fds[1]) })
	}
	return trs, peers
}

// A Go protocol that pauses, closes or aborts another transport whose
// bytes the same iteration read: that one hears no read event after the
// call; a paused one gets its bytes on resume, before newer ones.
func TestReadEventsAfterStopFromOtherTransport(t *testing.T) {
	for _, action := range []string{"pause", "close", "abort"} {
		t.Run(action, func(t *testing.T) {
			l := newTestLoop(t)
			var trs [2]*Transport
			var got [2][]byte
			var late, lost [2]int
			target := -1
			armed := false
			trs, peers := peerPair(t, l, func(i int) Protocol {
				return func(ev *Event) bool {
					switch ev.Kind {
					case DataReceived:
						if i == target {
							late[i]++
						}
						got[i] = append(got[i], ev.Data...)
						if armed && i != target {
							armed = false
							target = 1 - i
							switch action {
							case "pause":
								trs[target].PauseReading()
							case "close":
								trs[target].Close()
							case "abort":
								trs[target].Abort()
							}
						}
					case ConnectionLost:
						lost[i]++
					}
					return false
				}
			})
			l.RunOnce(true)
			armed = true
			unix.Write(peers[0], []byte("a"))
			unix.Write(peers[1], []byte("b"))
			runUntil(t, l, 5*time.Second, func() bool { return target >= 0 })
			for range 3 {
				l.RunOnce(true)
			}
			tg := target
			if late[tg] != 0 || len(got[tg]) != 0 {
				t.Fatalf("%s: %d read events after the call, got %q", action, late[tg], got[tg])
			}
			if action != "pause" {
				runUntil(t, l, 5*time.Second, func() bool { return lost[tg] == 1 })
				return
			}
			unix.Write(peers[tg], []byte("+"))
			l.RunOnce(true)
			if len(got[tg]) != 0 {
				t.Fatalf("paused: got %q", got[tg])
			}
			target = -1
			trs[tg].ResumeReading()
			want := string("ab"[tg]) + "+"
			runUntil(t, l, 5*time.Second, func() bool { return len(got[tg]) >= len(want) })
			if string(got[tg]) != want {
				t.Fatalf("after resume: %q, want %q", got[tg], want)
			}
		})
	}
}

// A paused transport's withheld bytes are a start_tls handshake's first
// flight: here the client's ClientHello, read in the iteration in which
// another transport's protocol paused this one, still reaches the server
// handshake started afterwards.
func TestWithheldBytesGoToStartTLS(t *testing.T) {
	l := newTestLoop(t)
	p := newTestPKI(t)
	var trs [2]*Transport
	paused := false
	trs, peers := peerPair(t, l, func(i int) Protocol {
		return func(ev *Event) bool {
			if ev.Kind == DataReceived && i == 0 && !paused {
				paused = true
				trs[1].PauseReading()
			}
			if ev.Kind == DataReceived && i == 1 && !trs[1].handshaking() && trs[1].tls == nil {
				t.Errorf("transport 1 got %q after it was paused", ev.Data)
			}
			return false
		}
	})
	for range 3 {
		l.RunOnce(true)
	}
	// FileConn on a dup, and that file closed now: a file left to its
	// finalizer would close peers[1]'s number again after the test's
	// cleanup closed it, maybe another test's fd by then.
	dup, err := unix.Dup(peers[1])
	if err != nil {
		t.Fatal(err)
	}
	f := os.NewFile(uintptr(dup), "peer")
	peerConn, err := net.FileConn(f)
	f.Close()
	if err != nil {
		t.Fatal(err)
	}
	defer peerConn.Close()
	// Transport 0 is readable first (epoll reports in that order), then
	// the ClientHello is in transport 1's socket before the loop looks.
	unix.Write(peers[0], []byte("go"))
	res := make(chan error, 1)
	wrote := make(chan struct{})
	go func() {
		c := tls.Client(&firstWrite{Conn: peerConn, done: wrote}, goClientConfig(p))
		res <- c.Handshake()
	}()
	<-wrote
	runUntil(t, l, 5*time.Second, func() bool { return paused })
	l.RunOnce(true)
	if !trs[1].hasHeld {
		t.Skip("the two reads came in different iterations: nothing was withheld")
	}
	var hsErr error
	hsDone := false
	if err := trs[1].StartTLS(p.serverConfig(t), true, "", func(err error) { hsErr, hsDone = err, true }); err != nil {
		t.Fatal(err)
	}
	trs[1].ResumeReading()
	runUntil(t, l, 10*time.Second, func() bool { return hsDone })
	if hsErr != nil {
		t.Fatalf("server handshake: %v", hsErr)
	}
	if err := <-res; err != nil {
		t.Fatalf("client handshake: %v", err)
	}
}

// firstWrite is a net.Conn that closes done once its first Write returned:
// the bytes are then in the socket.
type firstWrite struct {
	net.Conn
	done chan struct{}
	once bool
}

func (c *firstWrite) Write(b []byte) (int, error) {
	n, err := c.Conn.Write(b)
	if !c.once {
		c.once = true
		close(c.done)
	}
	return n, err
}

// The delivery check is skipped while no transport stopped since the
// queued events could have been queued (readStops). These tests put read
// events in the queue themselves (queueRead, as a read does) so that each
// stop lands exactly where that shortcut could miss it, once with Go
// protocols and once through an EventSink.

// withheldRig is two stream transports whose read events are recorded
// per transport, delivered by Go protocols or by a sink (viaSink); on, if
// set, runs after each delivered DataReceived.
type withheldRig struct {
	l     *Loop
	trs   [2]*Transport
	peers [2]int
	got   [2]string
	lost  [2]int
	on    func(i int, data string)
}

func newWithheldRig(t *testing.T, viaSink bool) *withheldRig {
	r := &withheldRig{l: newTestLoop(t)}
	record := func(ev *Event) {
		i := 0
		if ev.T == r.trs[1] {
			i = 1
		}
		switch ev.Kind {
		case DataReceived:
			r.got[i] += string(ev.Data)
			if r.on != nil {
				r.on(i, string(ev.Data))
			}
		case ConnectionLost:
			r.lost[i]++
		}
	}
	if viaSink {
		r.l.SetHost(&checkingSink{buf: make([]byte, readBufferSize), deliver: record})
	}
	r.trs, r.peers = peerPair(t, r.l, func(int) Protocol {
		if viaSink {
			return nil
		}
		return func(ev *Event) bool { record(ev); return false }
	})
	r.run()
	return r
}

// run lets the loop deliver what is queued (and read what is readable).
func (r *withheldRig) run() {
	for range 3 {
		r.l.RunOnce(true)
	}
}

// queueRead queues a DataReceived for transport i as its read would:
// the bytes in the shared read buffer.
func (r *withheldRig) queueRead(i int, s string) {
	n := copy(r.l.readChunk(), s)
	r.l.emit(Event{Kind: DataReceived, FD: -1, T: r.trs[i], Data: r.l.consume(n)})
}

func (r *withheldRig) stop(i int, action string) {
	switch action {
	case "pause":
		r.trs[i].PauseReading()
	case "close":
		r.trs[i].Close()
	case "abort":
		r.trs[i].Abort()
	}
}

func (r *withheldRig) want(t *testing.T, what string, got0, got1 string) {
	t.Helper()
	if r.got[0] != got0 || r.got[1] != got1 {
		t.Fatalf("%s: got %q, %q; want %q, %q", what, r.got[0], r.got[1], got0, got1)
	}
}

// checkingSink delivers as a host sink must: a read event whose transport
// may not hear it now (an earlier event of the call stopped it, or an
// earlier read of it was withheld in this call) is withheld. It is the
// loop's Host (an EventSink) and runs no host calls.
type checkingSink struct {
	nopHost
	buf     []byte
	deliver func(ev *Event)
}

func (s *checkingSink) ReadBuffer() []byte { return s.buf }

func (s *checkingSink) Deliver(l *Loop, evs []Event) {
	var held []*Transport
	for i := range evs {
		ev := &evs[i]
		if ev.isRead() && (!ev.T.ReadsDelivered() || slices.Contains(held, ev.T)) {
			ev.Withhold()
			held = append(held, ev.T)
			continue
		}
		s.deliver(ev)
	}
}

func forEachDelivery(t *testing.T, f func(t *testing.T, viaSink bool, action string)) {
	for _, via := range []string{"protocol", "sink"} {
		for _, action := range []string{"pause", "close", "abort"} {
			t.Run(via+"/"+action, func(t *testing.T) { f(t, via == "sink", action) })
		}
	}
}

// A stop after the reads were queued and before their delivery began: the
// stopped transport's read is withheld, the other's delivered.
func TestWithheldStopBeforeDelivery(t *testing.T) {
	forEachDelivery(t, func(t *testing.T, viaSink bool, action string) {
		r := newWithheldRig(t, viaSink)
		r.queueRead(0, "a")
		r.queueRead(1, "b")
		r.stop(0, action)
		r.run()
		r.want(t, "after the stop", "", "b")
		if action != "pause" {
			if r.lost[0] != 1 {
				t.Fatalf("ConnectionLost %d times", r.lost[0])
			}
			return
		}
		r.trs[0].ResumeReading()
		r.run()
		r.want(t, "after resume", "a", "b")
	})
}

// A read queued for a transport that stopped before the previous delivery
// took the queue (a TLS transport's plaintext after a handshake that ended
// while it was paused is one): the stop is older than anything delivery
// compares with, so the queueing itself must count.
func TestWithheldReadQueuedAfterStop(t *testing.T) {
	forEachDelivery(t, func(t *testing.T, viaSink bool, action string) {
		r := newWithheldRig(t, viaSink)
		r.stop(0, action)
		r.queueRead(1, "x")
		r.run()
		r.queueRead(0, "a")
		r.queueRead(1, "y")
		r.run()
		r.want(t, "stopped before", "", "xy")
		if action == "pause" {
			r.trs[0].ResumeReading()
			r.run()
			r.want(t, "after resume", "a", "xy")
		}
	})
}

// The first event's callback stops its own transport and the other one:
// the later reads of both in the same delivery are withheld, and come in
// order after resume.
func TestWithheldStopByFirstCallback(t *testing.T) {
	forEachDelivery(t, func(t *testing.T, viaSink bool, action string) {
		r := newWithheldRig(t, viaSink)
		r.on = func(i int, data string) {
			if data == "1" {
				r.stop(0, action)
				r.stop(1, action)
			}
		}
		r.queueRead(0, "1")
		r.queueRead(0, "2")
		r.queueRead(1, "3")
		r.queueRead(0, "4")
		r.run()
		r.want(t, "after the stop", "1", "")
		if action != "pause" {
			return
		}
		r.on = nil
		r.trs[1].ResumeReading()
		r.trs[0].ResumeReading()
		r.run()
		r.want(t, "after resume", "124", "3")
	})
}

// A transport that replays held reads receives new bytes in the same turn;
// the first replayed read's callback pauses it again: the rest of the
// replay and the new bytes are withheld again, in that order.
func TestWithheldReplayThenNewData(t *testing.T) {
	for _, viaSink := range []bool{false, true} {
		r := newWithheldRig(t, viaSink)
		r.queueRead(0, "h1")
		r.queueRead(0, "h2")
		r.trs[0].PauseReading()
		r.run()
		if !r.trs[0].hasHeld {
			t.Fatal("nothing held")
		}
		unix.Write(r.peers[0], []byte("n"))
		r.on = func(i int, data string) {
			if data == "h1" {
				r.trs[0].PauseReading()
			}
		}
		r.trs[0].ResumeReading()
		runUntil(t, r.l, 5*time.Second, func() bool { return r.got[0] != "" })
		r.run()
		r.want(t, "paused by the replay", "h1", "")
		r.on = nil
		r.trs[0].ResumeReading()
		runUntil(t, r.l, 5*time.Second, func() bool { return len(r.got[0]) >= len("h1h2n") })
		r.want(t, "after resume", "h1h2n", "")
	}
}
