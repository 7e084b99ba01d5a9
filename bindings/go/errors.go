// SPDX-License-Identifier: MIT

package libloop

import (
	"context"
	"strconv"
	"syscall"
)

// Error is a libloop error code: an LL_E* library code (<= -10000) or a
// negative errno value. Its Name and Message come from ll_err_name and
// ll_strerror. errors.Is(err, syscall.EBADF) matches Error(-EBADF).
type Error int

// The codes (EINVAL ... EFORKED), their names and messages, and the
// header's version are generated from include/libloop/errno.h and
// include/libloop.h (zz_errors_generated.go, by tools/errtab.py): edit the
// headers, then run make errtab.

// Code returns the integer code.
func (e Error) Code() int { return int(e) }

// Name returns the code's name ("LL_EINVAL", "EBADF", or "UNKNOWN"), from
// ll_err_name when the library is loaded.
func (e Error) Name() string {
	if lib := loadedLib.Load(); lib != nil {
		return lib.ErrName(int(e))
	}
	if name, _, ok := errorText(e); ok {
		return name
	}
	return "UNKNOWN"
}

// Message returns a description of the code, from ll_strerror when the
// library is loaded.
func (e Error) Message() string {
	if lib := loadedLib.Load(); lib != nil {
		return lib.StrError(int(e))
	}
	if _, message, ok := errorText(e); ok {
		return message
	}
	if e < 0 && e > -4096 {
		return syscall.Errno(-e).Error()
	}
	return "libloop error " + strconv.Itoa(int(e))
}

// Error implements error: "NAME: message".
func (e Error) Error() string { return e.Name() + ": " + e.Message() }

// Is reports whether target is the same code; a syscall.Errno matches the
// negative errno code it stands for, context.Canceled matches ECANCELLED
// and context.DeadlineExceeded ETIMEDOUT (as the core's codes do), so a
// cancelled future's error reads as a Go program expects.
func (e Error) Is(target error) bool {
	switch t := target.(type) {
	case Error:
		return t == e
	case syscall.Errno:
		return int(e) == -int(t)
	}
	switch target {
	case context.Canceled:
		return e == ECANCELLED
	case context.DeadlineExceeded:
		return e == ETIMEDOUT
	}
	return false
}

// check turns a C return code into an error: nil for >= 0.
func check(rc int32) error {
	if rc < 0 {
		return Error(rc)
	}
	return nil
}
