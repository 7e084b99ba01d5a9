// SPDX-License-Identifier: MIT

package libloop

import (
	"net/netip"
	"unsafe"

	"golang.org/x/sys/unix"
)

// maxDatagramsPerWake bounds the datagrams read for one readiness (the
// reads themselves: udp_batch_linux.go, udp_batch_other.go).
const maxDatagramsPerWake = 64

// OpenUDP makes a datagram transport (asyncio's create_datagram_endpoint):
// bound to localHost:localPort when localHost is not empty or localPort is
// not 0, connected to remoteHost:remotePort when remoteHost is not empty.
// flags: ReusePort. A host name (not an address, not "localhost") is looked
// up in place only while the loop is not running, else ENEEDASYNC:
// OpenUDPWith resolves off the loop thread.
func (l *Loop) OpenUDP(localHost string, localPort int, remoteHost string, remotePort int, flags int, proto Protocol) (*Transport, error) {
	o := UDPOptions{LocalHost: localHost, LocalPort: localPort, RemoteHost: remoteHost, RemotePort: remotePort, Flags: flags}
	if err := l.checkUDP(&o); err != nil {
		return nil, err
	}
	var remotes, locals []netip.Addr
	var err error
	if remoteHost != "" {
		if remotes, err = l.syncLookup(remoteHost); err != nil {
			return nil, err
		}
	}
	if localHost != "" {
		if locals, err = l.syncLookup(localHost); err != nil {
			return nil, err
		}
	}
	return l.openUDPAddrs(&o, remotes, locals, proto)
}

// UDPOptions are OpenUDPWith's arguments, OpenUDP's by name.
type UDPOptions struct {
	LocalHost  string
	LocalPort  int
	RemoteHost string
	RemotePort int
	Flags      int // ReusePort
}

// OpenUDPWith is OpenUDP for any hosts, as asyncio's
// create_datagram_endpoint: names are resolved on the resolver pool
// (resolver.go), never on the loop thread. done runs on the loop thread,
// in a later callback, exactly once (unless the loop closes first); bad
// arguments are refused here, before anything is queued.
func (l *Loop) OpenUDPWith(o UDPOptions, proto Protocol, done DialFunc) error {
	if done == nil {
		return EINVAL
	}
	if err := l.checkUDP(&o); err != nil {
		return err
	}
	return l.lookupThen([]string{o.RemoteHost, o.LocalHost}, func(addrs [][]netip.Addr, err error) {
		var t *Transport
		if err == nil {
			t, err = l.openUDPAddrs(&o, addrs[0], addrs[1], proto)
		}
		done(t, err)
	})
}

// checkUDP refuses OpenUDP's bad arguments.
func (l *Loop) checkUDP(o *UDPOptions) error {
	if l.closed.Load() {
		return ECLOSED
	}
	if !validPort(o.LocalPort) || !validPort(o.RemotePort) || o.Flags&^ReusePort != 0 {
		return EINVAL
	}
	if o.LocalHost == "" && o.LocalPort == 0 && o.RemoteHost == "" {
		return EINVAL // asyncio: "unexpected address family" without either
	}
	return nil
}

// openUDPAddrs makes the socket once the hosts are addresses: remotes[0]
// to connect to (none: not connected), the local address of the remote's
// family among locals (none: the wildcard).
func (l *Loop) openUDPAddrs(o *UDPOptions, remotes, locals []netip.Addr, proto Protocol) (*Transport, error) {
	if l.closed.Load() {
		return nil, ECLOSED
	}
	var local, remote unix.Sockaddr
	family := 0
	if len(remotes) > 0 {
		remote, family = addrSockaddr(remotes[0], o.RemotePort)
	}
	if o.LocalHost != "" || o.LocalPort != 0 {
		var fam int
		local, fam = addrSockaddr(localIP(locals, family), o.LocalPort)
		if family != 0 && fam != family {
			return nil, EINVAL
		}
		family = fam
	}
	fd, err := newSocket(family, unix.SOCK_DGRAM)
	if err != nil {
		return nil, err
	}
	if err = setupUDP(fd, local, remote, o.Flags); err != nil {
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

// localIP picks the local address: the first of ips of the remote's
// family (else the first), or with no ips the wildcard.
func localIP(ips []netip.Addr, family int) netip.Addr {
	if len(ips) == 0 {
		if family == unix.AF_INET6 {
			return netip.IPv6Unspecified()
		}
		return netip.IPv4Unspecified()
	}
	for _, ip := range ips {
		if family == 0 || (family == unix.AF_INET) == ip.Is4() {
			return ip
		}
	}
	return ips[0]
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

// OutDatagram is one datagram to send: Data to Addr, a raw struct sockaddr
// (nil: the connected peer).
type OutDatagram struct {
	Data, Addr []byte
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
		err := sendTo(int(t.fd), p, addr)
		if err == nil {
			return nil
		}
		if !sendWouldBlock(err) {
			t.sendFailed(err)
			return nil
		}
	}
	t.queueDatagrams([]OutDatagram{{Data: p, Addr: addr}})
	return nil
}

// SendMany sends ds in order, as that many SendTo calls would, in as few
// system calls as the platform allows (sendmmsg on Linux: one per 32).
// Every address is checked before anything is sent: a bad one is EINVAL
// and nothing is sent. ds is not kept: what the kernel refuses for now is
// copied into the queue.
func (t *Transport) SendMany(ds []OutDatagram) error {
	if t.state != tOpen {
		if t.Lost() && t.kind == Datagram {
			return nil // dropped, as SendTo's
		}
		return ECLOSED
	}
	if t.kind != Datagram {
		return EINVAL
	}
	for i := range ds {
		if len(ds[i].Addr) > int(unsafe.Sizeof(unix.RawSockaddrAny{})) {
			return EINVAL
		}
	}
	if t.pw != nil && len(t.pw.dgq) > 0 {
		t.queueDatagrams(ds) // behind what waits: order is kept
		return nil
	}
	for len(ds) > 0 {
		n, err := sendDatagrams(t.loop, int(t.fd), ds)
		ds = ds[n:]
		if err == nil {
			return nil
		}
		if sendWouldBlock(err) {
			t.queueDatagrams(ds)
			return nil
		}
		t.sendFailed(err) // ds[0]'s own error: it is dropped, the rest go on
		ds = ds[1:]
	}
	return nil
}

// sendWouldBlock reports whether a send error means "not now": the datagram
// waits in the queue for writability.
func sendWouldBlock(err error) bool {
	return err == unix.EAGAIN || err == unix.ENOBUFS || err == unix.EINTR
}

// sendFailed reports one datagram's send error, as asyncio's error_received.
func (t *Transport) sendFailed(err error) {
	t.loop.emit(Event{Kind: ErrorReceived, Code: Code(err), FD: int(t.evFD), T: t})
}

// queueDatagrams copies ds behind the queued sends and waits for
// writability.
func (t *Transport) queueDatagrams(ds []OutDatagram) {
	pw := t.writes()
	for i := range ds {
		pw.dgq = append(pw.dgq, OutDatagram{Data: append([]byte(nil), ds[i].Data...), Addr: append([]byte(nil), ds[i].Addr...)})
	}
	t.updateInterest()
	t.maybePause()
}

// flushDatagrams sends queued datagrams while the kernel takes them.
func (t *Transport) flushDatagrams() {
	pw := t.writes()
	for len(pw.dgq) > 0 {
		n, err := sendDatagrams(t.loop, int(t.fd), pw.dgq)
		clear(pw.dgq[:n])
		pw.dgq = pw.dgq[n:]
		if err == nil {
			continue
		}
		if sendWouldBlock(err) {
			break
		}
		t.sendFailed(err)
		pw.dgq[0] = OutDatagram{}
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
