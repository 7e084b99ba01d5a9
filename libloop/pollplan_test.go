// SPDX-License-Identifier: MIT

package libloop

import (
	"bytes"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// countingSelector counts the polls the loop makes, by kind.
type countingSelector struct {
	selector
	zero, blocking int
}

func (s *countingSelector) poll(timeoutNs int64, evs []ioEvent, noTry bool) ([]ioEvent, bool, error) {
	if timeoutNs == 0 {
		s.zero++
	} else {
		s.blocking++
	}
	return s.selector.poll(timeoutNs, evs, noTry)
}

func countPolls(l *Loop) *countingSelector {
	c := &countingSelector{selector: l.sel}
	l.sel = c
	return c
}

// socketpair returns a connected pair of non-blocking Unix stream sockets,
// closed at the end of the test.
func socketpair(t *testing.T) [2]int {
	t.Helper()
	sp, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_STREAM, 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { unix.Close(sp[0]); unix.Close(sp[1]) })
	return sp
}

// runForeverWithin runs the loop until stopped, failing the test if that
// takes longer than limit.
func runForeverWithin(t *testing.T, l *Loop, limit time.Duration) {
	t.Helper()
	timedOut := false
	h, err := l.CallLater(limit.Seconds(), func() { timedOut = true; l.Stop() })
	if err != nil {
		t.Fatal(err)
	}
	if err := l.RunForever(); err != nil {
		t.Fatal(err)
	}
	h.Cancel()
	if timedOut {
		t.Fatalf("the loop did not stop within %v", limit)
	}
}

// A client waiting on its server (an answer a while after each request,
// whose callback wakes a step in the next iteration, as a task's is) makes
// one poll per answer, the one that waits for it: no empty try before it,
// no zero-timeout poll for the step after it (asyncio's order makes three).
// Every answer arrives, in order.
func TestPollPlanRequestResponse(t *testing.T) {
	l := newTestLoop(t)
	sp := socketpair(t)
	const n = 200
	go func() { // the server: answers each 4-byte request after 300 µs
		var b [4]byte
		for i := 0; i < n; i++ {
			if _, err := readFull(sp[1], b[:]); err != nil {
				return
			}
			time.Sleep(300 * time.Microsecond)
			unix.Write(sp[1], b[:])
		}
	}()
	var tr *Transport
	var got []byte
	sent := 0
	send := func() {
		sent++
		tr.Write([]byte{byte(sent), 0, 0, 0})
	}
	var err error
	tr, err = l.OpenTransport(sp[0], Stream, func(ev *Event) bool {
		if ev.Kind == DataReceived {
			got = append(got, ev.Data...)
			if len(got) == 4*sent { // the answer is whole: wake the next step
				if sent == n {
					l.Stop()
				} else {
					l.CallSoon(send)
				}
			}
		}
		return false
	})
	if err != nil {
		t.Fatal(err)
	}
	polls := countPolls(l)
	l.CallSoon(send)
	runForeverWithin(t, l, 30*time.Second)
	for i := 0; i < n; i++ {
		if got[4*i] != byte(i+1) {
			t.Fatalf("answer %d is %d", i+1, got[4*i])
		}
	}
	// A loaded machine may delay an iteration past the skip's window now
	// and then: that costs a poll, not an answer.
	if all := polls.zero + polls.blocking; all > n*3/2 {
		t.Fatalf("%d polls (%d zero-timeout, %d that may block) for %d answers, want about one each",
			all, polls.zero, polls.blocking, n)
	}
	if l.plan.skipped < n/2 {
		t.Fatalf("%d zero-timeout polls skipped for %d answers", l.plan.skipped, n)
	}
}

func readFull(fd int, b []byte) (int, error) {
	for got := 0; got < len(b); {
		k, err := unix.Read(fd, b[got:])
		if err == unix.EAGAIN {
			var pfd = []unix.PollFd{{Fd: int32(fd), Events: unix.POLLIN}}
			unix.Poll(pfd, 1000)
			continue
		}
		if err != nil || k == 0 {
			return got, err
		}
		got += k
	}
	return len(b), nil
}

// A ping-pong inside one loop finds its next event at once every iteration:
// the loop keeps polling without blocking first, and never chooses a
// timeout or blocks.
func TestPollPlanBusyTriesFirst(t *testing.T) {
	l := newTestLoop(t)
	sp := socketpair(t)
	const n = 1000
	rounds := 0
	var a, b *Transport
	echo := func(self **Transport, count bool) Protocol {
		return func(ev *Event) bool {
			if ev.Kind == DataReceived {
				if count {
					rounds++
					if rounds == n {
						l.Stop()
						return false
					}
				}
				(*self).Write(ev.Data)
			}
			return false
		}
	}
	var err error
	if a, err = l.OpenTransport(sp[0], Stream, echo(&a, true)); err != nil {
		t.Fatal(err)
	}
	if b, err = l.OpenTransport(sp[1], Stream, echo(&b, false)); err != nil {
		t.Fatal(err)
	}
	polls := countPolls(l)
	l.CallSoon(func() { a.Write([]byte("ping")) })
	runForeverWithin(t, l, 30*time.Second)
	if polls.blocking > 5 {
		t.Fatalf("%d polls that may block in %d round trips inside one loop, want none past the start (%d without)",
			polls.blocking, n, polls.zero)
	}
}

// An fd that stays readable is reported by every iteration's poll, as
// asyncio's level-triggered selector does, even when its reader keeps the
// loop busy: a reader's callback never lets the next iteration skip its
// poll.
func TestPollPlanReaderEveryIteration(t *testing.T) {
	l := newTestLoop(t)
	sp := socketpair(t)
	var iters []uint64
	if err := l.AddReader(sp[0], func() {
		iters = append(iters, l.iter) // reads nothing: the fd stays readable
		if len(iters) == 5 {
			l.Stop()
			return
		}
		l.CallSoon(func() {})
	}); err != nil {
		t.Fatal(err)
	}
	go func() {
		time.Sleep(20 * time.Millisecond) // the loop blocks first
		unix.Write(sp[1], []byte("x"))
	}()
	runForeverWithin(t, l, 10*time.Second)
	for i := 1; i < len(iters); i++ {
		if iters[i] != iters[i-1]+1 {
			t.Fatalf("the reader of a readable fd ran in iterations %v, want every iteration", iters)
		}
	}
}

// A stream read that fills its buffer leaves more in the socket: the next
// iteration polls and reads on, even though the first read's callback
// gave it work (a zero-timeout poll is skipped only after reads that
// drained their sockets).
func TestPollPlanUndrainedReadPolls(t *testing.T) {
	l := newTestLoop(t)
	sp := socketpair(t)
	for _, fd := range sp {
		unix.SetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_SNDBUF, 1<<20)
		unix.SetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_RCVBUF, 1<<20)
	}
	msg := bytes.Repeat([]byte("0123456789abcdef"), 2*maxReadChunk/16)
	var iters []uint64
	pos, bad := 0, false
	_, err := l.OpenTransport(sp[0], Stream, func(ev *Event) bool {
		if ev.Kind != DataReceived {
			return false
		}
		if pos == 0 && len(ev.Data) == 1 { // the warm-up byte
			l.Stop()
			return false
		}
		iters = append(iters, l.iter)
		bad = bad || !bytes.Equal(ev.Data, msg[pos:pos+len(ev.Data)])
		pos += len(ev.Data)
		if len(iters) == 2 {
			l.Stop()
		} else {
			l.CallSoon(func() {})
		}
		return false
	})
	if err != nil {
		t.Fatal(err)
	}
	// A first byte, so that the reads below find their buffers made.
	unix.Write(sp[1], []byte("w"))
	runForeverWithin(t, l, 10*time.Second)
	go func() {
		time.Sleep(20 * time.Millisecond) // the loop blocks first
		unix.SetNonblock(sp[1], false)
		unix.Write(sp[1], msg)
	}()
	runForeverWithin(t, l, 10*time.Second)
	if len(iters) != 2 || iters[1] != iters[0]+1 {
		t.Fatalf("data of an undrained socket in iterations %v, want two in a row", iters)
	}
	if bad {
		t.Fatal("the data arrived changed")
	}
}

// A loop that always has work still polls at least every other
// iteration: after an answer that lets the next iteration skip its poll,
// an fd that becomes ready meanwhile is served within two iterations of
// it while a callback chain keeps the loop busy.
func TestPollPlanBusyLoopStillPolls(t *testing.T) {
	l := newTestLoop(t)
	sp := socketpair(t)
	other := socketpair(t)
	var answered, served uint64
	chain := 0
	var spin func()
	spin = func() {
		chain++
		if served != 0 || chain > 1000 {
			l.Stop()
			return
		}
		l.CallSoon(spin)
	}
	_, err := l.OpenTransport(sp[0], Stream, func(ev *Event) bool {
		if ev.Kind == DataReceived && answered == 0 {
			answered = l.iter
			unix.Write(other[1], []byte("x")) // ready for the next poll
			l.CallSoon(spin)
		}
		return false
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := l.AddReader(other[0], func() {
		var b [8]byte
		unix.Read(other[0], b[:])
		served = l.iter
	}); err != nil {
		t.Fatal(err)
	}
	go func() {
		time.Sleep(20 * time.Millisecond) // the loop blocks first
		unix.Write(sp[1], []byte("answer"))
	}()
	runForeverWithin(t, l, 10*time.Second)
	if served == 0 || served > answered+2 {
		t.Fatalf("answer in iteration %d, the other fd served in %d: want within two", answered, served)
	}
}
