// SPDX-License-Identifier: MIT

package libloop

import "github.com/libloop/libloop/internal/timers"

// Sleep returns a future that finishes (with value 0) after delay seconds;
// cancelling it cancels its timer. A delay <= 0 returns a future that is
// already finished, so awaiting it resumes a task in the next iteration, as
// asyncio.sleep(0) does.
func (l *Loop) Sleep(delay float64) (*Future, error) {
	if timers.Refused(delay) {
		return nil, EINVAL
	}
	f, err := l.NewFuture()
	if err != nil {
		return nil, err
	}
	if delay <= 0 {
		f.SetResult(0, nil)
		return f, nil
	}
	d, _ := deadlineAfter(delay)
	h := l.scheduleNs(d, nil, HostCall{})
	h.futfn, h.fut = sleepFired, f
	f.hold() // the timer's: dropped when the handle is recycled
	h.refs++ // the role's: dropped when it fires or f is cancelled
	f.role = (*sleepTimer)(h)
	return f, nil
}

// sleepTimer is a Sleep future's role: its timer, so that cancelling the
// future cancels the timer. The handle itself, under another name: no
// record of its own.
type sleepTimer Handle

func (s *sleepTimer) cancel(f *Future, msg string) bool {
	if f.state != Pending {
		return false
	}
	s.drop(f, true)
	return f.cancelSelf(msg)
}

func (s *sleepTimer) disposed(*Future) {}

// drop ends the role (the timer fired, or is cancelled).
func (s *sleepTimer) drop(f *Future, cancel bool) {
	f.role = nil
	h := (*Handle)(s)
	if cancel {
		h.Cancel()
	}
	f.loop.unref(h)
}

// sleepFired is a Sleep future's timer callback.
func sleepFired(f *Future) {
	if s, ok := f.role.(*sleepTimer); ok {
		s.drop(f, false)
	}
	if !f.Done() {
		f.SetResult(0, nil)
	}
}
