// SPDX-License-Identifier: MIT

package libloop

import (
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// A Go Protocol that panics in DataReceived is reported to the exception
// handler as a callback's panic, and the loop goes on serving I/O: runIO
// runs as a ready-queue mark (runMark) outside debug mode and as a handle
// in it, and both recover.
func TestProtocolPanicReportedIOMark(t *testing.T) {
	for _, debug := range []bool{false, true} {
		l := newTestLoop(t)
		l.SetDebug(debug)
		var msgs []string
		l.SetExceptionHandler(func(c *ErrorContext) { msgs = append(msgs, c.Message) })
		sp, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_STREAM, 0)
		if err != nil {
			t.Fatal(err)
		}
		defer unix.Close(sp[1])
		got := 0
		_, err = l.OpenTransport(sp[0], Stream, func(ev *Event) bool {
			if ev.Kind == DataReceived {
				got++
				if got == 1 {
					panic("boom")
				}
			}
			return false
		})
		if err != nil {
			t.Fatal(err)
		}
		unix.Write(sp[1], []byte("a"))
		runUntil(t, l, 5*time.Second, func() bool { return got == 1 })
		unix.Write(sp[1], []byte("b"))
		runUntil(t, l, 5*time.Second, func() bool { return got == 2 })
		panics := 0
		for _, m := range msgs {
			if strings.Contains(m, "boom") {
				panics++
			}
		}
		if panics != 1 {
			t.Fatalf("debug=%v: %d reports of the panic, want 1 (%q)", debug, panics, msgs)
		}
	}
}

// An event caused outside runIO (a close from a callback) is delivered by
// a deferred flush, after the callback that caused it returns and before
// a callback scheduled after it runs.
func TestDeferredFlushOrderIOMark(t *testing.T) {
	for _, debug := range []bool{false, true} {
		l := newTestLoop(t)
		l.SetDebug(debug)
		sp, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_STREAM, 0)
		if err != nil {
			t.Fatal(err)
		}
		defer unix.Close(sp[1])
		var order []string
		tr, err := l.OpenTransport(sp[0], Stream, func(ev *Event) bool {
			if ev.Kind == ConnectionLost {
				order = append(order, "lost")
			}
			return false
		})
		if err != nil {
			t.Fatal(err)
		}
		l.CallSoon(func() {
			tr.Close()
			order = append(order, "closed")
			l.CallSoon(func() { order = append(order, "next") })
		})
		runUntil(t, l, 5*time.Second, func() bool { return len(order) == 3 })
		if strings.Join(order, ",") != "closed,lost,next" {
			t.Fatalf("debug=%v: order %v, want closed,lost,next", debug, order)
		}
	}
}
