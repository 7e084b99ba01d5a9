// SPDX-License-Identifier: MIT

package libloop

import "golang.org/x/sys/unix"

// waitInBackground reaps the child on a goroutine and reports its exit to
// the loop: the fallback where neither a pidfd (Linux 5.3+) nor kqueue's
// EVFILT_PROC can watch it, and for children still running when the loop
// closes.
func waitInBackground(p *Process) {
	l, pid := p.loop, p.pid
	go func() {
		var ws unix.WaitStatus
		for {
			if _, err := unix.Wait4(pid, &ws, 0, nil); err != unix.EINTR {
				break
			}
		}
		p.reaped.Store(true)
		code := exitCode(ws)
		l.CallSoonThreadsafe(func() { p.exit(code) })
	}()
}

// watchExitBySelector asks a selector that can (kqueue) to report p's exit.
func (p *Process) watchExitBySelector() bool {
	w, ok := p.loop.sel.(exitWatcher)
	if !ok || w.watchExit(p.pid) != nil {
		return false
	}
	if p.loop.exits == nil {
		p.loop.exits = make(map[int]*Process)
	}
	p.loop.exits[p.pid] = p
	return true
}

// childExited reaps a child the selector reported (evExit).
func (l *Loop) childExited(pid int) {
	p := l.exits[pid]
	if p == nil {
		return
	}
	delete(l.exits, pid)
	var ws unix.WaitStatus
	code := 255 // reaped by someone else: the status is lost
	for {
		_, err := unix.Wait4(pid, &ws, 0, nil)
		if err == unix.EINTR {
			continue
		}
		if err == nil {
			code = exitCode(ws)
		}
		break
	}
	p.exit(code)
}

// reapExitWatches: the loop closes; children it watched are reaped by a
// goroutine when they exit, so none lingers as a zombie.
func (l *Loop) reapExitWatches() {
	for pid, p := range l.exits {
		delete(l.exits, pid)
		waitInBackground(p)
	}
}
