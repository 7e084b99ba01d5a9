// SPDX-License-Identifier: MIT

package libloop

import (
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// peerPair opens two stream transports on socketpairs with Go protocols;
// the test writes to peers[i] to make transport i readable.
func peerPair(t *testing.T, l *Loop, proto func(i int) Protocol) (trs [2]*Transport, peers [2]int) {
	t.Helper()
	for i := range 2 {
		fds, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
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
