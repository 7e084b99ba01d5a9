// SPDX-License-Identifier: MIT

package libloop

import (
	"crypto/tls"
	"net"
	"os"
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
	peerConn, err := net.FileConn(os.NewFile(uintptr(peers[1]), "peer"))
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
