// SPDX-License-Identifier: MIT

package libloop

import (
	"time"
	"unsafe"
)

// DialOptions are asyncio's create_connection arguments beyond host and
// port (ll_connect_options).
type DialOptions struct {
	LocalHost string // bind to this address first ("" with LocalPort 0: no bind)
	LocalPort int
	// HappyEyeballsDelay > 0 races the addresses (RFC 8305): an attempt
	// not connected within it has the next start too; the first to
	// connect wins. 0: one at a time.
	HappyEyeballsDelay time.Duration
	// Interleave alternates address families, this many of the first
	// family first; 0: 1 with happy eyeballs, else the resolver's order;
	// -1: the resolver's order.
	Interleave int
	TLS        *TLSConfig // nil: plain TCP
	ServerName string     // with TLS: the name to verify ("": the config's, else host)
}

// The ll_connect_options layout (LP64): size, port, host, local_host,
// local_port, interleave, happy_eyeballs_delay, tls, server_name.
const (
	coSize       = 0
	coPort       = 4
	coHost       = 8
	coLocalHost  = 16
	coLocalPort  = 24
	coInterleave = 28
	coDelay      = 32
	coTLS        = 40
	coServerName = 48
	coLen        = 56
)

// DialTCPWith is DialTCP with asyncio's other create_connection arguments
// (ll_tcp_connect_ex): a local address, happy eyeballs, TLS.
func (l *Loop) DialTCPWith(host string, port int, o DialOptions, p Protocol) (*DialFuture, error) {
	if !fitsInt32(port) || !fitsInt32(o.LocalPort) || !fitsInt32(o.Interleave) || o.HappyEyeballsDelay < 0 {
		return nil, EINVAL
	}
	opts, err := NewCBuf(coLen)
	if err != nil {
		return nil, err
	}
	defer opts.Free()
	local, err := optCString(o.LocalHost)
	if err != nil {
		return nil, err
	}
	defer local.Free()
	name, err := optCString(o.ServerName)
	if err != nil {
		return nil, err
	}
	defer name.Free()
	b := opts.Ptr()
	*(*uint32)(unsafe.Add(b, coSize)) = coLen
	*(*int32)(unsafe.Add(b, coPort)) = int32(port)
	*(*unsafe.Pointer)(unsafe.Add(b, coLocalHost)) = local.ptr()
	*(*int32)(unsafe.Add(b, coLocalPort)) = int32(o.LocalPort)
	*(*int32)(unsafe.Add(b, coInterleave)) = int32(o.Interleave)
	*(*float64)(unsafe.Add(b, coDelay)) = o.HappyEyeballsDelay.Seconds()
	if o.TLS != nil {
		*(*uint64)(unsafe.Add(b, coTLS)) = o.TLS.id
	}
	*(*unsafe.Pointer)(unsafe.Add(b, coServerName)) = name.ptr()
	return l.dial(host, p, func(h unsafe.Pointer, fn, arg uintptr, out unsafe.Pointer) int32 {
		*(*unsafe.Pointer)(unsafe.Add(b, coHost)) = h
		return l.raw().TCPConnectEx(l.id, b, fn, arg, out)
	})
}
