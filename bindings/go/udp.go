// SPDX-License-Identifier: MIT

package libloop

import (
	"net/netip"
	"unsafe"
)

// OpenUDP opens a UDP transport (asyncio's create_datagram_endpoint):
// bound to localHost:localPort when either is given, connected to
// remoteHost:remotePort when remoteHost is not "". At least one side is
// required. A name is looked up in place only while the loop is not
// running, ENEEDASYNC while it runs: OpenUDPWith resolves off the loop
// thread.
// Datagrams arrive at p's DatagramReceived, send and ICMP errors at its
// ErrorReceived (the transport stays open). Only ReusePort applies of the
// options. Errors: an Error matching EADDRINUSE, ENONAME, EINVAL.
func (l *Loop) OpenUDP(localHost string, localPort int, remoteHost string, remotePort int, p Protocol, opts ...ListenOption) (*Transport, error) {
	c := listenOptions(opts)
	if !fitsInt32(localPort) || !fitsInt32(remotePort) {
		return nil, EINVAL
	}
	lh, err := optCString(localHost)
	if err != nil {
		return nil, err
	}
	defer lh.Free()
	rh, err := optCString(remoteHost)
	if err != nil {
		return nil, err
	}
	defer rh.Free()
	n := l.netInit()
	fn, arg := l.protoArgs(n)
	id, err := outCall(func(out unsafe.Pointer) int32 {
		return l.raw().UDPOpen(l.id, lh.ptr(), int32(localPort), rh.ptr(), int32(remotePort), int32(c.flags), fn, arg, out)
	})
	if err != nil {
		return nil, err
	}
	return l.addTransport(id, p), nil
}

// optCString is s in C memory, or nil (NULL) for "".
func optCString(s string) (*CBuf, error) {
	if s == "" {
		return nil, nil
	}
	return NewCString(s)
}

// ptr is Ptr, or NULL for a nil CBuf.
func (b *CBuf) ptr() unsafe.Pointer {
	if b == nil {
		return nil
	}
	return b.p
}

// SendTo sends one datagram to addr, or to the connected peer when addr is
// the zero netip.AddrPort. What the kernel refuses for now is queued; a
// failure comes to ErrorReceived. data may be reused at once. On a stream
// transport with no address it is Write. EINVAL for an address on a stream.
func (t *Transport) SendTo(data []byte, addr netip.AddrPort) error {
	var sa []byte
	if addr.IsValid() {
		sa = inetSockaddr(addr)
	}
	return t.SendToRaw(data, sa)
}

// SendToRaw is SendTo with the address as a raw struct sockaddr (nil: the
// connected peer), for families SendTo does not spell.
func (t *Transport) SendToRaw(data, sockaddr []byte) error {
	if len(sockaddr) > 1<<16 || len(data) > 1<<30 {
		return EINVAL
	}
	// One C block holds the address, then the datagram (never split).
	room := uintptr(len(sockaddr) + len(data))
	if room == 0 {
		return check(t.raw().TransportSendto(t.id, nil, 0, nil, 0))
	}
	return t.loop.withScratch(room, func(c []byte) int32 {
		var a, d unsafe.Pointer
		if len(sockaddr) > 0 {
			copy(c, sockaddr)
			a = cPtr(c)
		}
		if len(data) > 0 {
			copy(c[len(sockaddr):], data)
			d = cPtr(c[len(sockaddr):])
		}
		return t.raw().TransportSendto(t.id, d, uintptr(len(data)), a, uint32(len(sockaddr)))
	})
}

// Datagram is one datagram of SendMany: Data to To, or to the connected
// peer when To is the zero netip.AddrPort.
type Datagram struct {
	Data []byte
	To   netip.AddrPort
}

// cDatagram is ll_datagram's layout on the 64-bit platforms the binding
// runs on.
type cDatagram struct {
	data    unsafe.Pointer
	len     uintptr
	addr    unsafe.Pointer
	addrlen uint32
	_       uint32
}

// SendMany sends ds in order in one call (ll_udp_sendmany: sendmmsg on
// Linux), as that many SendTo calls would; ds may be reused at once. A
// datagram the kernel rejects comes to ErrorReceived and the rest still go.
// EINVAL (and nothing sent) for a stream transport or an oversized
// datagram.
func (t *Transport) SendMany(ds []Datagram) error {
	if len(ds) == 0 {
		return check(t.raw().UDPSendmany(t.id, nil, 0, 0))
	}
	// One C block: the records, then each address and datagram.
	rec := unsafe.Sizeof(cDatagram{})
	room := uintptr(len(ds)) * rec
	for i := range ds {
		if len(ds[i].Data) > 1<<30 {
			return EINVAL
		}
		room += uintptr(len(ds[i].Data))
		if ds[i].To.IsValid() {
			room += inetSockaddrMax
		}
	}
	return t.loop.withScratch(room, func(c []byte) int32 {
		recs := unsafe.Slice((*cDatagram)(cPtr(c)), len(ds))
		off := uintptr(len(ds)) * rec
		for i := range ds {
			r := cDatagram{len: uintptr(len(ds[i].Data))}
			if ds[i].To.IsValid() {
				sa := inetSockaddr(ds[i].To)
				copy(c[off:], sa)
				r.addr, r.addrlen = cPtr(c[off:]), uint32(len(sa))
				off += inetSockaddrMax
			}
			if len(ds[i].Data) > 0 {
				copy(c[off:], ds[i].Data)
				r.data = cPtr(c[off:])
				off += uintptr(len(ds[i].Data))
			}
			recs[i] = r
		}
		return t.raw().UDPSendmany(t.id, cPtr(c), uintptr(len(ds)), 0)
	})
}

// inetSockaddrMax is the most inetSockaddr returns (a sockaddr_in6).
const inetSockaddrMax = 28
