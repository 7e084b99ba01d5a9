// SPDX-License-Identifier: MIT

package libloop

// Errno is a library error code. Values match the C ABI's LL_* codes so that
// the C layer passes them through unchanged; system failures are negative
// errno values (see SysErr).
type Errno int

// The codes (EINVAL ... EFORKED) and their names and messages are
// generated from include/libloop/errno.h's LL_ERRNO_MAP, the one table of
// them: edit the header, then run go generate (zz_errors_generated.go).
// EFORKED is returned by the C library's fork guard (capi/cloop/forkguard.c)
// without entering Go; the core never returns it.
//go:generate python3 ../tools/errtab.py

// Error implements error.
func (e Errno) Error() string { return e.Message() }

// Name returns the constant's name ("LL_EINVAL", "EBADF"), or "UNKNOWN".
func (e Errno) Name() string {
	if name, _, ok := errnoText(e); ok {
		return name
	}
	if e < 0 && e > -4096 {
		return sysErrName(int(-e))
	}
	return "UNKNOWN"
}

// Message returns a human-readable description; never empty.
func (e Errno) Message() string {
	if _, message, ok := errnoText(e); ok {
		return message
	}
	if e < 0 && e > -4096 {
		return sysErrMessage(int(-e))
	}
	if e >= 0 {
		return "success"
	}
	return "unknown error"
}

// Code converts any error the core returns into a C ABI code: 0 for nil, the
// Errno itself, -errno for a system error, LL_EINVAL for anything else.
func Code(err error) int {
	if err == nil {
		return 0
	}
	switch e := err.(type) {
	case Errno:
		return int(e)
	}
	if n, ok := sysErrno(err); ok {
		return -n
	}
	return int(EINVAL)
}
