// SPDX-License-Identifier: MIT

package libloop

// Errno is a library error code. Values match the C ABI's LL_* codes so that
// the C layer passes them through unchanged; system failures are negative
// errno values (see SysErr).
type Errno int

// Library error codes (SPEC.md "Conventions"). All are at or below -10000.
const (
	EINVAL       Errno = -10000 // bad argument
	EBADHANDLE   Errno = -10001 // stale, forged or wrong-kind id
	ECLOSED      Errno = -10002 // the loop is closed
	ERUNNING     Errno = -10003 // the loop is running / already running
	ESTATE       Errno = -10004 // asyncio's InvalidStateError
	ECANCELLED   Errno = -10005 // the future or task was cancelled
	EWRONGTHREAD Errno = -10006 // called from a thread that does not run the loop
	ESTOPPED     Errno = -10007 // the loop stopped before the future completed
	ETIMEDOUT    Errno = -10008 // a timeout passed
	ENOMEM       Errno = -10009 // out of memory or out of id space
	ENONAME      Errno = -10010 // a host name that does not resolve

	// TLS handshake and record failures (tls_errors.go says which Go
	// error becomes which).
	ETLS          Errno = -10011 // a TLS failure no other code names
	ETLSCERT      Errno = -10012 // the peer's certificate did not verify
	ETLSHOST      Errno = -10013 // the peer's certificate is not for the expected host name
	ETLSNOCERT    Errno = -10014 // the peer sent no certificate where one is required
	ETLSALERT     Errno = -10015 // the peer ended the handshake with a fatal alert
	ETLSNEGOTIATE Errno = -10016 // no TLS version, cipher suite or ALPN protocol in common
	ETLSPROTO     Errno = -10017 // the peer sent bytes that are not valid TLS
	ETLSEOF       Errno = -10018 // the connection closed mid-handshake or mid-record

	// The C library's fork guard (capi/forkguard.c) returns this without
	// entering Go; the core never does. Named here so that every table
	// of codes has it.
	EFORKED Errno = -10019 // a fork() child of the process that loaded the library
)

var errnoNames = map[Errno][2]string{
	EINVAL:       {"LL_EINVAL", "invalid argument"},
	EBADHANDLE:   {"LL_EBADHANDLE", "invalid, stale or wrong-kind handle id"},
	ECLOSED:      {"LL_ECLOSED", "event loop is closed"},
	ERUNNING:     {"LL_ERUNNING", "event loop is running"},
	ESTATE:       {"LL_ESTATE", "invalid state"},
	ECANCELLED:   {"LL_ECANCELLED", "cancelled"},
	EWRONGTHREAD: {"LL_EWRONGTHREAD", "called from a thread that does not run the loop"},
	ESTOPPED:     {"LL_ESTOPPED", "event loop stopped before future completed"},
	ETIMEDOUT:    {"LL_ETIMEDOUT", "timed out"},
	ENOMEM:       {"LL_ENOMEM", "out of memory"},
	ENONAME:      {"LL_ENONAME", "name does not resolve"},

	ETLS:          {"LL_ETLS", "TLS failure"},
	ETLSCERT:      {"LL_ETLSCERT", "TLS peer certificate verification failed"},
	ETLSHOST:      {"LL_ETLSHOST", "TLS peer certificate does not match the host name"},
	ETLSNOCERT:    {"LL_ETLSNOCERT", "TLS peer sent no certificate"},
	ETLSALERT:     {"LL_ETLSALERT", "TLS peer refused the handshake (fatal alert)"},
	ETLSNEGOTIATE: {"LL_ETLSNEGOTIATE", "no TLS version, cipher suite or ALPN protocol in common"},
	ETLSPROTO:     {"LL_ETLSPROTO", "TLS protocol error: the peer sent bytes that are not valid TLS"},
	ETLSEOF:       {"LL_ETLSEOF", "connection closed during the TLS handshake or mid-record"},

	// capi/strings.c has the same two strings, for a fork child.
	EFORKED: {"LL_EFORKED", "this process is a fork() child of the process that loaded libloop; exec, or load libloop after fork"},
}

// Error implements error.
func (e Errno) Error() string { return e.Message() }

// Name returns the constant's name ("LL_EINVAL", "EBADF"), or "UNKNOWN".
func (e Errno) Name() string {
	if n, ok := errnoNames[e]; ok {
		return n[0]
	}
	if e < 0 && e > -4096 {
		return sysErrName(int(-e))
	}
	return "UNKNOWN"
}

// Message returns a human-readable description; never empty.
func (e Errno) Message() string {
	if n, ok := errnoNames[e]; ok {
		return n[1]
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
