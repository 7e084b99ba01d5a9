// SPDX-License-Identifier: MIT

package libloop

import "unsafe"

// Terminal modes for SetTTYMode (LL_TTY_NORMAL, LL_TTY_RAW).
const (
	TTYNormal = 0 // LL_TTY_NORMAL: the settings the terminal had before libloop changed them
	TTYRaw    = 1 // LL_TTY_RAW: bytes as typed, no line editing, echo or signal keys
)

// OpenTTY adopts the terminal fd as a stream transport (ll_tty_open): it
// works on an open of its own, so fd stays the caller's. Errors: EINVAL
// (not a terminal), an Error matching EBADF.
func (l *Loop) OpenTTY(fd int, p Protocol) (*Transport, error) {
	if !fitsInt32(fd) {
		return nil, EINVAL
	}
	n := l.netInit()
	fn, arg := l.protoArgs(n)
	id, err := outCall(func(out unsafe.Pointer) int32 {
		return l.raw().TTYOpen(l.id, int32(fd), fn, arg, out)
	})
	if err != nil {
		return nil, err
	}
	return l.addTransport(id, p), nil
}

// SetTTYMode switches the terminal to TTYRaw or back to TTYNormal.
func (t *Transport) SetTTYMode(mode int) error {
	if !fitsInt32(mode) {
		return EINVAL
	}
	return check(t.raw().TTYSetMode(t.id, int32(mode)))
}

// WindowSize returns the terminal's columns and rows (read it again on
// SIGWINCH).
func (t *Transport) WindowSize() (cols, rows int, err error) {
	// One 8-byte C slot holds both ints (the binding passes C no Go memory).
	out, err := getSlot()
	if err != nil {
		return 0, 0, err
	}
	defer putSlot(out)
	if err := check(t.raw().TTYGetWinsize(t.id, out, unsafe.Add(out, 4))); err != nil {
		return 0, 0, err
	}
	return int(*(*int32)(out)), int(*(*int32)(unsafe.Add(out, 4))), nil
}

// ResetTTYModes puts every terminal libloop switched to raw mode back in
// its own mode (ll_tty_reset_mode), for a program's exit path.
func (lib *Lib) ResetTTYModes() error {
	return check(lib.Raw.TTYResetMode())
}
