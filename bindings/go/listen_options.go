// SPDX-License-Identifier: MIT

package libloop

import "unsafe"

// The ll_listen_options layout (LP64): size, port, host, backlog, flags, tls.
const (
	loSize    = 0
	loPort    = 4
	loHost    = 8
	loBacklog = 16
	loFlags   = 20
	loTLS     = 24
	loLen     = 32
)

// The ll_udp_options layout (LP64): size, local_port, local_host,
// remote_host, remote_port, flags.
const (
	uoSize       = 0
	uoLocalPort  = 4
	uoLocalHost  = 8
	uoRemoteHost = 16
	uoRemotePort = 24
	uoFlags      = 28
	uoLen        = 32
)

// ListenFuture is ListenTCPWith's future; its value is the server.
type ListenFuture struct {
	Future
	key uintptr // the accepted connections' protocol entry
	srv *Server
}

// Server returns the listening server once the future is done, or the
// listen error (an Error: ENONAME, EADDRINUSE ...; ESTATE while pending).
func (f *ListenFuture) Server() (*Server, error) {
	v, err := f.Result()
	if err != nil {
		return nil, err
	}
	if f.srv == nil {
		f.srv = &Server{loop: f.loop, id: uint64(v), key: f.key}
	}
	return f.srv, nil
}

// ListenTCPWith is ListenTCP as asyncio's create_server (ll_tcp_listen_ex):
// a host name is resolved off the loop thread and the future completes once
// the sockets listen; tls non-nil makes it a TLS server (ListenTLS). Bad
// arguments are refused here. ListenTCP itself takes addresses, and a name
// only while the loop is not running (ENEEDASYNC while it runs).
func (l *Loop) ListenTCPWith(host string, port int, tls *TLSConfig, factory func() Protocol, opts ...ListenOption) (*ListenFuture, error) {
	c := listenOptions(opts)
	if factory == nil || !fitsInt32(port) || !fitsInt32(c.backlog) {
		return nil, EINVAL
	}
	buf, err := NewCBuf(loLen)
	if err != nil {
		return nil, err
	}
	defer buf.Free()
	h, err := optCString(host)
	if err != nil {
		return nil, err
	}
	defer h.Free()
	b := buf.Ptr()
	*(*uint32)(unsafe.Add(b, loSize)) = loLen
	*(*int32)(unsafe.Add(b, loPort)) = int32(port)
	*(*unsafe.Pointer)(unsafe.Add(b, loHost)) = h.ptr()
	*(*int32)(unsafe.Add(b, loBacklog)) = int32(c.backlog)
	*(*int32)(unsafe.Add(b, loFlags)) = int32(c.flags)
	if tls != nil {
		*(*uint64)(unsafe.Add(b, loTLS)) = tls.id
	}
	l.netInit()
	key := addEntry(&cbEntry{kind: kindProtocol, owner: l.id,
		proto: func(_ uint64, ev Event) int32 {
			return l.dispatch(ev, func(id uint64) *Transport { return l.made(id, factory()) })
		}})
	id, err := outCall(func(out unsafe.Pointer) int32 { return l.raw().TCPListenEx(l.id, b, ProtocolFnPtr(), key, out) })
	if err != nil {
		removeEntry(key)
		return nil, err
	}
	f := &ListenFuture{Future: Future{lib: l.lib, loop: l, owned: true, id: id}, key: key}
	ownedFutures.Store(id, &f.Future)
	// A listen that failed accepts nothing: its entry goes once it is done.
	done := addEntry(&cbEntry{kind: kindPlain, once: true, owner: l.id,
		plain: func(uint64) {
			if _, err := f.Result(); err != nil {
				removeEntry(key)
			}
		}})
	if l.raw().FutureAddDoneCallback(id, CallbackPtr(), done) != 0 {
		removeEntry(done) // the loop's Close frees key then
	}
	return f, nil
}

// UDPOptions are OpenUDPWith's arguments: OpenUDP's, by name.
type UDPOptions struct {
	LocalHost  string
	LocalPort  int
	RemoteHost string
	RemotePort int
	ReusePort  bool
}

// OpenUDPWith is OpenUDP as asyncio's create_datagram_endpoint
// (ll_udp_open_ex): host names are resolved off the loop thread; the
// future's Transport is the datagram transport. OpenUDP itself takes
// addresses, and names only while the loop is not running (ENEEDASYNC
// while it runs).
func (l *Loop) OpenUDPWith(o UDPOptions, p Protocol) (*DialFuture, error) {
	if !fitsInt32(o.LocalPort) || !fitsInt32(o.RemotePort) {
		return nil, EINVAL
	}
	buf, err := NewCBuf(uoLen)
	if err != nil {
		return nil, err
	}
	defer buf.Free()
	local, err := optCString(o.LocalHost)
	if err != nil {
		return nil, err
	}
	defer local.Free()
	b := buf.Ptr()
	*(*uint32)(unsafe.Add(b, uoSize)) = uoLen
	*(*int32)(unsafe.Add(b, uoLocalPort)) = int32(o.LocalPort)
	*(*unsafe.Pointer)(unsafe.Add(b, uoLocalHost)) = local.ptr()
	*(*int32)(unsafe.Add(b, uoRemotePort)) = int32(o.RemotePort)
	if o.ReusePort {
		*(*int32)(unsafe.Add(b, uoFlags)) = flagReusePort
	}
	return l.dial(o.RemoteHost, p, func(h unsafe.Pointer, fn, arg uintptr, out unsafe.Pointer) int32 {
		if o.RemoteHost != "" {
			*(*unsafe.Pointer)(unsafe.Add(b, uoRemoteHost)) = h
		}
		return l.raw().UDPOpenEx(l.id, b, fn, arg, out)
	})
}
