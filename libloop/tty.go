// SPDX-License-Identifier: MIT

package libloop

import (
	"sync"

	"golang.org/x/sys/unix"
)

// Terminals (libuv's uv_tty_t): a terminal fd adopted as a stream
// transport, its mode switched between the terminal's own settings and raw
// input, and its window size. A terminal's mode is the process's, not the
// loop's, so what libloop changed is remembered process-wide, per device,
// for ResetTTYModes.

// TTY modes for SetTTYMode.
const (
	TTYNormal = 0 // the settings the terminal had before libloop changed them
	TTYRaw    = 1 // bytes as typed: no line editing, echo, signals or CR translation
)

// savedMode is a terminal's settings from before libloop's first change,
// with an fd of its own so a reset works after every transport closed.
type savedMode struct {
	fd   int
	orig unix.Termios
	raw  bool
}

// ttyModes holds the saved settings by device number; a process has few
// terminals, and an entry lives as long as the process.
var ttyModes struct {
	sync.Mutex
	saved map[uint64]*savedMode
}

// OpenTTY adopts the terminal fd as a stream transport. The transport works
// on an open of its own (the terminal reopened by its name where the system
// tells it, else a duplicate), so fd stays the caller's and, when reopened,
// non-blocking mode does not reach others sharing fd (a shell's stdin).
// EINVAL if fd is not a terminal.
func (l *Loop) OpenTTY(fd int, proto Protocol) (*Transport, error) {
	if l.closed.Load() {
		return nil, ECLOSED
	}
	if fd < 0 {
		return nil, sysEBADF
	}
	if _, err := unix.FcntlInt(uintptr(fd), unix.F_GETFD, 0); err != nil {
		return nil, err
	}
	if !isTerminal(fd) {
		return nil, EINVAL
	}
	own, err := reopenTTY(fd)
	if err != nil {
		return nil, err
	}
	t, err := l.OpenTransport(own, Stream, proto)
	if err != nil {
		unix.Close(own)
		return nil, err
	}
	return t, nil
}

// isTerminal reports whether fd is a terminal.
func isTerminal(fd int) bool {
	_, err := unix.IoctlGetTermios(fd, ioctlGetTermios)
	return err == nil
}

// SetTTYMode switches the transport's terminal to TTYRaw or back to
// TTYNormal. EINVAL for another mode or a transport that is not a terminal.
func (t *Transport) SetTTYMode(mode int) error {
	if mode != TTYNormal && mode != TTYRaw {
		return EINVAL
	}
	if t.state != tOpen {
		return ECLOSED
	}
	cur, err := unix.IoctlGetTermios(int(t.fd), ioctlGetTermios)
	if err != nil {
		return EINVAL
	}
	var st unix.Stat_t
	if err := unix.Fstat(int(t.fd), &st); err != nil {
		return err
	}
	ttyModes.Lock()
	defer ttyModes.Unlock()
	s := ttyModes.saved[uint64(st.Rdev)]
	if mode == TTYNormal {
		if s == nil || !s.raw {
			return nil // never changed: it is in its own mode
		}
		if err := unix.IoctlSetTermios(int(t.fd), ioctlSetTermios, &s.orig); err != nil {
			return err
		}
		s.raw = false
		return nil
	}
	if s == nil {
		keep, err := unix.FcntlInt(uintptr(t.fd), unix.F_DUPFD_CLOEXEC, 0)
		if err != nil {
			return err
		}
		if ttyModes.saved == nil {
			ttyModes.saved = make(map[uint64]*savedMode)
		}
		s = &savedMode{fd: keep, orig: *cur}
		ttyModes.saved[uint64(st.Rdev)] = s
	}
	raw := s.orig
	makeRaw(&raw)
	if err := unix.IoctlSetTermios(int(t.fd), ioctlSetTermios, &raw); err != nil {
		return err
	}
	s.raw = true
	return nil
}

// makeRaw turns settings into raw input: no break or CR translation,
// parity or 8th-bit stripping, or flow control on input; 8-bit characters;
// no echo, line editing, extended input or signal keys; a read returns as
// soon as one byte is there. Output keeps its NL→CRNL, so printed lines
// still start at the left.
func makeRaw(tio *unix.Termios) {
	tio.Iflag &^= unix.BRKINT | unix.ICRNL | unix.INPCK | unix.ISTRIP | unix.IXON
	tio.Oflag |= unix.ONLCR
	tio.Cflag |= unix.CS8
	tio.Lflag &^= unix.ECHO | unix.ICANON | unix.IEXTEN | unix.ISIG
	tio.Cc[unix.VMIN] = 1
	tio.Cc[unix.VTIME] = 0
}

// ResetTTYModes puts every terminal libloop switched to raw mode back in
// the mode it had, through fds of its own (so after its transports closed
// too): for a program's exit path. It returns the first error.
func ResetTTYModes() error {
	ttyModes.Lock()
	defer ttyModes.Unlock()
	var first error
	for _, s := range ttyModes.saved {
		if !s.raw {
			continue
		}
		if err := unix.IoctlSetTermios(s.fd, ioctlSetTermios, &s.orig); err != nil && first == nil {
			first = err
			continue
		}
		s.raw = false
	}
	return first
}

// WindowSize returns the terminal's columns and rows. EINVAL if the
// transport is not a terminal.
func (t *Transport) WindowSize() (cols, rows int, err error) {
	if t.state != tOpen {
		return 0, 0, ECLOSED
	}
	ws, err := unix.IoctlGetWinsize(int(t.fd), unix.TIOCGWINSZ)
	if err != nil {
		return 0, 0, EINVAL
	}
	return int(ws.Col), int(ws.Row), nil
}
