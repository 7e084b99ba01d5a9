package libloop

import "golang.org/x/sys/unix"

// waitInBackground reaps the child on a goroutine and reports its exit to
// the loop: the fallback where no pidfd can be watched (an old Linux
// kernel; the BSDs for now, where kqueue's EVFILT_PROC would do).
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
