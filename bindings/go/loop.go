// SPDX-License-Identifier: MIT

package libloop

import (
	"sync"
	"time"
)

// Loop is a libloop event loop (an ll_loop id). Use it from the thread that
// runs it; only CallSoonThreadsafe and Wakeup may be called from any
// goroutine. Close or Release it when done.
type Loop struct {
	lib *Lib
	id  uint64

	mu      sync.Mutex // guards the fields below
	readers map[int]uintptr
	writers map[int]uintptr
	excKey  uintptr
	excFn   func(ErrorContext)
	hostKey uintptr
	net     *netState // transports (protocol.go); nil until the first one

	// delivery numbers the batch sink's calls (loop thread only; 0: none
	// yet): Transport.heldIn compares with it.
	delivery uint64

	// closed is closed once the loop is closed, waking the goroutines in
	// Future.Wait (whose posted callbacks will never run then).
	closed    chan struct{}
	closeOnce sync.Once
}

// loops maps live loop ids to their Loop, for panic reports.
var loops sync.Map // uint64 -> *Loop

func lookupLoop(id uint64) *Loop {
	if v, ok := loops.Load(id); ok {
		return v.(*Loop)
	}
	return nil
}

// NewLoop creates a loop in the process's library (see Open).
func NewLoop() (*Loop, error) {
	lib, err := Open()
	if err != nil {
		return nil, err
	}
	return lib.NewLoop()
}

// NewLoop creates a loop (ll_loop_new).
func (lib *Lib) NewLoop() (*Loop, error) {
	out, err := getSlot()
	if err != nil {
		return nil, err
	}
	defer putSlot(out)
	if err := check(lib.Raw.LoopNew(out)); err != nil {
		return nil, err
	}
	l := &Loop{lib: lib, id: *(*uint64)(out),
		readers: make(map[int]uintptr), writers: make(map[int]uintptr), closed: make(chan struct{})}
	loops.Store(l.id, l)
	return l, nil
}

func (l *Loop) raw() *Raw { return l.lib.Raw }

// ID returns the loop's ll_loop id (0 after Release).
func (l *Loop) ID() uint64 { return l.id }

// RunForever runs iterations on the calling thread until Stop
// (ll_loop_run_forever).
func (l *Loop) RunForever() error { return check(l.raw().RunForever(l.id)) }

// RunOnce runs one iteration (ll_loop_run_once); with nowait the poll does
// not block, otherwise it waits until I/O, a timer or a thread-safe call is due.
func (l *Loop) RunOnce(nowait bool) error {
	mode := RunModeOnce
	if nowait {
		mode = RunModeNowait
	}
	return check(l.raw().RunOnce(l.id, mode))
}

// Stop makes RunForever return once the current iteration has finished;
// called before RunForever, the next run does exactly one iteration.
func (l *Loop) Stop() error { return check(l.raw().Stop(l.id)) }

// IsRunning reports whether the loop is running (false for a released loop).
func (l *Loop) IsRunning() bool { return l.raw().IsRunning(l.id) == 1 }

// IsClosed reports whether the loop is closed (true for a released loop).
func (l *Loop) IsClosed() bool { return l.raw().IsClosed(l.id) != 0 }

// Time returns the loop's monotonic clock in seconds (ll_loop_time).
func (l *Loop) Time() float64 { return l.raw().Time(l.id) }

// SetDebug turns debug mode on or off: slow callbacks are reported to the
// exception handler and calls from a thread other than the running one fail
// with EWRONGTHREAD.
func (l *Loop) SetDebug(on bool) error {
	v := int32(0)
	if on {
		v = 1
	}
	return check(l.raw().SetDebug(l.id, v))
}

// Debug reports whether debug mode is on.
func (l *Loop) Debug() bool { return l.raw().GetDebug(l.id) == 1 }

// SetSlowCallbackDuration sets the debug-mode threshold for reporting a slow
// callback (default 100ms).
func (l *Loop) SetSlowCallbackDuration(d time.Duration) error {
	return check(l.raw().SetSlowCallbackDuration(l.id, d.Seconds()))
}

// Wakeup makes a blocked poll return without scheduling anything. Safe from
// any goroutine.
func (l *Loop) Wakeup() error { return check(l.raw().Wakeup(l.id)) }

// Close drops every pending callback, timer and fd watcher and frees the
// selector; ERUNNING while the loop runs. Idempotent. The loop's callback
// table entries are freed.
func (l *Loop) Close() error {
	if err := check(l.raw().LoopClose(l.id)); err != nil {
		return err
	}
	l.dropCallbacks()
	l.closeOnce.Do(func() { close(l.closed) })
	return nil
}

// Release closes the loop and drops its id (ll_release); the Loop must not
// be used afterwards. Releasing twice does nothing.
func (l *Loop) Release() error {
	if l.id == 0 {
		return nil
	}
	if err := check(l.raw().Release(l.id)); err != nil {
		return err
	}
	l.dropCallbacks()
	l.closeOnce.Do(func() { close(l.closed) })
	loops.Delete(l.id)
	l.id = 0
	return nil
}

// dropCallbacks frees the table entries of a closed loop (whose callbacks
// will never run) and releases the library ids of its pending handles.
func (l *Loop) dropCallbacks() {
	for _, e := range dropOwner(l.id) {
		if e.handle != nil {
			e.handle.drop()
		}
		if e.hook != nil {
			e.hook.release()
		}
		if e.timer != nil {
			e.timer.release()
		}
		if e.fsw != nil {
			e.fsw.release()
		}
	}
	l.mu.Lock()
	clear(l.readers)
	clear(l.writers)
	l.excKey, l.excFn = 0, nil
	l.hostKey = 0
	l.mu.Unlock()
	l.dropNet()
}
