// SPDX-License-Identifier: MIT

// Package fake holds the stand-ins that the unit tests of
// internal/streamconn and internal/packetconn share: a Loop that runs
// posted functions on a goroutine of its own, the calls every transport
// fake counts, and a wait for what the loop goroutine does. It is a
// package of its own, apart from conntest, because conntest imports
// packetconn and packetconn's own tests import this.
package fake

import (
	"sync"
	"syscall"
	"testing"
	"time"
)

// Loop runs posted functions in order on one goroutine, as a loop thread
// would: streamconn.Loop (Post, Closed, Done) without a real loop.
type Loop struct {
	mu     sync.Mutex
	posts  chan func()
	done   chan struct{}
	closed bool
	hold   sync.Mutex // held: posted functions wait (Hold)
}

// postBuffer is how many posts wait unrun before Post blocks: more than
// any test posts while the loop is held.
const postBuffer = 4096

// NewLoop starts a Loop, closed and its goroutine waited for when t ends.
func NewLoop(t testing.TB) *Loop {
	l := &Loop{posts: make(chan func(), postBuffer), done: make(chan struct{})}
	stopped := make(chan struct{})
	go func() {
		defer close(stopped)
		for {
			select {
			case f := <-l.posts:
				l.hold.Lock()
				f()
				l.hold.Unlock()
			case <-l.done:
				return
			}
		}
	}()
	t.Cleanup(func() { l.Close(); <-stopped })
	return l
}

// Post queues f to run on the loop goroutine; ESHUTDOWN once the loop is
// closed, and then f never runs.
func (l *Loop) Post(f func()) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.closed {
		return syscall.ESHUTDOWN
	}
	l.posts <- f
	return nil
}

// Closed reports whether Close has run.
func (l *Loop) Closed() bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.closed
}

// Done is closed by Close.
func (l *Loop) Done() <-chan struct{} { return l.done }

// Close closes the loop, as a real loop's close: Done is closed, later
// posts fail, and queued ones never run. A second Close does nothing.
func (l *Loop) Close() {
	l.mu.Lock()
	defer l.mu.Unlock()
	if !l.closed {
		l.closed = true
		close(l.done)
	}
}

// Sync returns once every function posted before it has run: the loop
// runs posts in order, so a marker posted now runs after them. What a
// test would otherwise wait a while for (that something did not happen)
// it knows at once, however loaded the machine.
func (l *Loop) Sync() error {
	ran := make(chan struct{})
	if err := l.Post(func() { close(ran) }); err != nil {
		return err
	}
	<-ran
	return nil
}

// Hold keeps the loop from running posted functions (one already running
// finishes first) until release is called: a loop busy elsewhere.
func (l *Loop) Hold() (release func()) {
	l.hold.Lock()
	return l.hold.Unlock
}

// Transport counts the calls every transport fake takes alike; a
// package's fake embeds it and adds its own writes. Mu guards the counts
// and whatever the embedding fake records.
type Transport struct {
	Mu                      sync.Mutex
	Pauses, Resumes, Closes int
}

// Close counts a close.
func (t *Transport) Close() error { t.Mu.Lock(); t.Closes++; t.Mu.Unlock(); return nil }

// PauseReading counts a pause.
func (t *Transport) PauseReading() error { t.Mu.Lock(); t.Pauses++; t.Mu.Unlock(); return nil }

// ResumeReading counts a resume.
func (t *Transport) ResumeReading() error { t.Mu.Lock(); t.Resumes++; t.Mu.Unlock(); return nil }

// Counts reads the three counts.
func (t *Transport) Counts() (pauses, resumes, closes int) {
	t.Mu.Lock()
	defer t.Mu.Unlock()
	return t.Pauses, t.Resumes, t.Closes
}

// waitFor bounds Eventually: generous, since it costs nothing when cond
// comes true, and a loaded machine (make test beside other builds, -race)
// may leave the loop goroutine unscheduled for a while.
const waitFor = 10 * time.Second

// Eventually polls cond until it holds, and fails t (naming what) if it
// does not within waitFor: what the loop goroutine was asked to do.
func Eventually(t testing.TB, what string, cond func() bool) {
	t.Helper()
	for end := time.Now().Add(waitFor); !cond(); {
		if time.Now().After(end) {
			t.Fatalf("timed out after %v waiting for %s", waitFor, what)
		}
		time.Sleep(time.Millisecond)
	}
}
