// SPDX-License-Identifier: MIT

package libloop

import (
	"net/netip"
	"unsafe"

	"golang.org/x/sys/unix"
)

// maxDatagramsPerWake bounds the datagrams read for one readiness.
const maxDatagramsPerWake = 64

// datagram is a send the kernel refused for now, kept with its address.
type datagram struct {
	data, addr []byte
}

// OpenUDP makes a datagram transport (asyncio's create_datagram_endpoint):
// bound to localHost:localPort when localHost is not empty or localPort is
// not 0, connected to remoteHost:remotePort when remoteHost is not empty.
// Names are resolved in place. flags: ReusePort.
func (l *Loop) OpenUDP(localHost string, localPort int, remoteHost string, remotePort int, flags int, proto Protocol) (*Transport, error) {
	if l.closed.Load() {
		return nil, ECLOSED
	}
	if !validPort(localPort) || !validPort(remotePort) || flags&^ReusePort != 0 {
		return nil, EINVAL
	}
	if localHost == "" && localPort == 0 && remoteHost == "" {
		return nil, EINVAL // asyncio: "unexpected address family" without either
	}
	var local, remote unix.Sockaddr
	family := 0
	if remoteHost != "" {
		ips, err := lookupHost(remoteHost)
		if err != nil {
			return nil, err
		}
		remote, family = addrSockaddr(ips[0], remotePort)
	}
	if localHost != "" || localPort != 0 {
		ip, err := localIP(localHost, family)
		if err != nil {
			return nil, err
		}
		var fam int
		local, fam = addrSockaddr(ip, localPort)
		if family != 0 && fam != family {
			return nil, EINVAL
		}
		family = fam
	}
	fd, err := newSocket(family, unix.SOCK_DGRAM)
	if err != nil {
		return nil, err
	}
	if err = setupUDP(fd, local, remote, flags); err != nil {
		unix.Close(fd)
		return nil, err
	}
	t := l.newTransport(fd, Datagram, true, proto)
	if err := t.start(); err != nil {
		t.Refuse()
		return nil, err
	}
	return t, nil
}

// localIP picks the local address: host's first address of the remote's
// family, or the wildcard.
func localIP(host string, family int) (netip.Addr, error) {
	if host == "" {
		if family == unix.AF_INET6 {
			return netip.IPv6Unspecified(), nil
		}
		return netip.IPv4Unspecified(), nil
	}
	ips, err := lookupHost(host)
	if err != nil {
		return netip.Addr{}, err
	}
	for _, ip := range ips {
		if family == 0 || (family == unix.AF_INET) == ip.Is4() {
			return ip, nil
		}
	}
	return ips[0], nil
}

func setupUDP(fd int, local, remote unix.Sockaddr, flags int) error {
	if flags&ReusePort != 0 {
		if err := unix.SetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_REUSEPORT, 1); err != nil {
			return err
		}
	}
	if local != nil {
		if err := unix.Bind(fd, local); err != nil {
			return err
		}
	}
	if remote != nil {
		return unix.Connect(fd, remote)
	}
	return nil
}

// SendTo sends one datagram to addr, a raw struct sockaddr (nil: the
// connected peer). What the kernel refuses for now is queued; an error is
// reported as ErrorReceived, as asyncio's error_received, not returned.
// Once the transport is lost (not closed by the host) a send is dropped
// and returns nil, as Write's.
func (t *Transport) SendTo(p, addr []byte) error {
	if t.state != tOpen {
		if t.Lost() && addr == nil || t.Lost() && t.kind == Datagram {
			return t.Write(p) // dropped (a read pipe's is EINVAL, after WriteEOF ESTATE)
		}
		return ECLOSED
	}
	if t.kind != Datagram {
		if addr != nil {
			return EINVAL
		}
		return t.Write(p)
	}
	if len(addr) > int(unsafe.Sizeof(unix.RawSockaddrAny{})) {
		return EINVAL
	}
	if t.pw == nil || len(t.pw.dgq) == 0 {
		err := sendTo(t.fd, p, addr)
		if err == nil {
			return nil
		}
		if err != unix.EAGAIN && err != unix.ENOBUFS && err != unix.EINTR {
			t.loop.emit(Event{Kind: ErrorReceived, Code: Code(err), FD: int(t.evFD), T: t})
			return nil
		}
	}
	pw := t.writes()
	pw.dgq = append(pw.dgq, datagram{data: append([]byte(nil), p...), addr: append([]byte(nil), addr...)})
	t.updateInterest()
	t.maybePause()
	return nil
}

// flushDatagrams sends queued datagrams while the kernel takes them.
func (t *Transport) flushDatagrams() {
	pw := t.writes()
	for len(pw.dgq) > 0 {
		d := &pw.dgq[0]
		err := sendTo(t.fd, d.data, d.addr)
		if err == unix.EAGAIN || err == unix.ENOBUFS || err == unix.EINTR {
			break
		}
		if err != nil {
			t.loop.emit(Event{Kind: ErrorReceived, Code: Code(err), FD: int(t.evFD), T: t})
		}
		pw.dgq[0] = datagram{}
		pw.dgq = pw.dgq[1:]
	}
	if len(pw.dgq) == 0 {
		pw.dgq = nil
		t.dropIdleWrites()
		if t.state == tClosing {
			t.finish(0)
			return
		}
		t.updateInterest()
	}
	t.maybeResume()
}

// readDatagrams reads what is pending; each datagram and its sender's
// address go into the shared read buffer.
func (t *Transport) readDatagrams() {
	l := t.loop
	for i := 0; i < maxDatagramsPerWake && t.IsReading(); i++ {
		buf := l.readChunk()
		var rsa unix.RawSockaddrAny
		alen := uint32(unsafe.Sizeof(rsa))
		r, _, e := unix.Syscall6(unix.SYS_RECVFROM, uintptr(t.fd), uintptr(unsafe.Pointer(unsafe.SliceData(buf))),
			uintptr(len(buf)), 0, uintptr(unsafe.Pointer(&rsa)), uintptr(unsafe.Pointer(&alen)))
		if e == unix.EAGAIN || e == unix.EINTR {
			return
		}
		if e != 0 {
			// An ICMP error on a connected socket (ECONNREFUSED, ...).
			l.emit(Event{Kind: ErrorReceived, Code: -int(e), FD: int(t.evFD), T: t})
			continue
		}
		data := l.consume(int(r))
		alen = min(alen, uint32(unsafe.Sizeof(rsa)))
		addr := l.consume(int(alen))
		copy(addr, unsafe.Slice((*byte)(unsafe.Pointer(&rsa)), alen))
		l.emit(Event{Kind: DatagramReceived, FD: int(t.evFD), T: t, Data: data, Addr: addr})
	}
}
