// SPDX-License-Identifier: MIT

package libloop

import (
	"strconv"
	"syscall"
)

// Error is a libloop error code: an LL_E* library code (<= -10000) or a
// negative errno value. Its Name and Message come from ll_err_name and
// ll_strerror. errors.Is(err, syscall.EBADF) matches Error(-EBADF).
type Error int

// The library's error codes, as defined by include/libloop.h.
const (
	EINVAL       Error = -10000 // bad argument (NULL callback, NaN delay, oversize value)
	EBADHANDLE   Error = -10001 // id 0, stale, forged or of the wrong kind
	ECLOSED      Error = -10002 // the loop is closed
	ERUNNING     Error = -10003 // the loop is running / cannot while running
	ESTATE       Error = -10004 // invalid state (asyncio's InvalidStateError)
	ECANCELLED   Error = -10005 // cancelled
	EWRONGTHREAD Error = -10006 // called from a thread other than the one running the loop (libloop.h: Threads)
	ESTOPPED     Error = -10007 // the loop stopped before the future completed
	ETIMEDOUT    Error = -10008 // a timeout passed
	ENOMEM       Error = -10009 // out of memory or of id space
	ENONAME      Error = -10010 // a host name that does not resolve

	ETLS          Error = -10011 // a TLS failure no other code names
	ETLSCERT      Error = -10012 // the peer's certificate did not verify
	ETLSHOST      Error = -10013 // the peer's certificate is not for the expected host name
	ETLSNOCERT    Error = -10014 // the peer sent no certificate where one is required
	ETLSALERT     Error = -10015 // the peer ended the handshake with a fatal alert
	ETLSNEGOTIATE Error = -10016 // no TLS version, cipher suite or ALPN protocol in common
	ETLSPROTO     Error = -10017 // the peer sent bytes that are not valid TLS
	ETLSEOF       Error = -10018 // the connection closed mid-handshake or mid-record

	// EFORKED: this process is a fork() child of the one that loaded
	// libloop, whose runtime's threads did not survive the fork; exec, or
	// load libloop after forking (libloop.h: Forking).
	EFORKED Error = -10019
)

// fallbackNames names the library codes when the library is not loaded.
var fallbackNames = map[Error]string{
	EINVAL: "LL_EINVAL", EBADHANDLE: "LL_EBADHANDLE", ECLOSED: "LL_ECLOSED",
	ERUNNING: "LL_ERUNNING", ESTATE: "LL_ESTATE", ECANCELLED: "LL_ECANCELLED",
	EWRONGTHREAD: "LL_EWRONGTHREAD", ESTOPPED: "LL_ESTOPPED",
	ETIMEDOUT: "LL_ETIMEDOUT", ENOMEM: "LL_ENOMEM", ENONAME: "LL_ENONAME",
	ETLS: "LL_ETLS", ETLSCERT: "LL_ETLSCERT", ETLSHOST: "LL_ETLSHOST", ETLSNOCERT: "LL_ETLSNOCERT",
	ETLSALERT: "LL_ETLSALERT", ETLSNEGOTIATE: "LL_ETLSNEGOTIATE", ETLSPROTO: "LL_ETLSPROTO", ETLSEOF: "LL_ETLSEOF",
	EFORKED: "LL_EFORKED",
}

// Code returns the integer code.
func (e Error) Code() int { return int(e) }

// Name returns the code's name ("LL_EINVAL", "EBADF", or "UNKNOWN"), from
// ll_err_name when the library is loaded.
func (e Error) Name() string {
	if lib := loadedLib.Load(); lib != nil {
		return lib.ErrName(int(e))
	}
	if n, ok := fallbackNames[e]; ok {
		return n
	}
	return "UNKNOWN"
}

// Message returns a description of the code, from ll_strerror when the
// library is loaded.
func (e Error) Message() string {
	if lib := loadedLib.Load(); lib != nil {
		return lib.StrError(int(e))
	}
	if e < 0 && e > -4096 {
		return syscall.Errno(-e).Error()
	}
	return "libloop error " + strconv.Itoa(int(e))
}

// Error implements error: "NAME: message".
func (e Error) Error() string { return e.Name() + ": " + e.Message() }

// Is reports whether target is the same code; a syscall.Errno matches the
// negative errno code it stands for.
func (e Error) Is(target error) bool {
	switch t := target.(type) {
	case Error:
		return t == e
	case syscall.Errno:
		return int(e) == -int(t)
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
