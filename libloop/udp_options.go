// SPDX-License-Identifier: MIT

package libloop

import (
	"net"
	"net/netip"
	"strconv"

	"golang.org/x/sys/unix"
)

// UDP socket options: broadcast, TTLs, multicast routing and group
// membership, as libuv's uv_udp_set_* calls. Each works on an open datagram
// transport of the address family it was opened with; an address of the
// other family is EINVAL, as is any option on a stream (asyncio leaves these
// to sock.setsockopt on the transport's socket).

// Join and Leave say whether SetMembership and SetSourceMembership add or
// drop the socket's membership of a group.
const (
	Join  = 1
	Leave = 2
)

// udpFamily returns the family of an open datagram transport's socket.
func (t *Transport) udpFamily() (int, error) {
	if t.kind != Datagram {
		return 0, EINVAL
	}
	if t.state != tOpen {
		return 0, ECLOSED
	}
	sa, err := unix.Getsockname(int(t.fd))
	if err != nil {
		return 0, err
	}
	switch sa.(type) {
	case *unix.SockaddrInet4:
		return unix.AF_INET, nil
	case *unix.SockaddrInet6:
		return unix.AF_INET6, nil
	}
	return 0, EINVAL // a Unix datagram socket has no IP options
}

// setIPInt sets an integer option: opt4 on an IPv4 socket, opt6 on IPv6.
func (t *Transport) setIPInt(opt4, opt6, v int) error {
	fam, err := t.udpFamily()
	if err != nil {
		return err
	}
	if fam == unix.AF_INET {
		return unix.SetsockoptInt(int(t.fd), unix.IPPROTO_IP, opt4, v)
	}
	return unix.SetsockoptInt(int(t.fd), unix.IPPROTO_IPV6, opt6, v)
}

// SetBroadcast lets the socket send to broadcast addresses (SO_BROADCAST).
func (t *Transport) SetBroadcast(on bool) error {
	if _, err := t.udpFamily(); err != nil {
		return err
	}
	return unix.SetsockoptInt(int(t.fd), unix.SOL_SOCKET, unix.SO_BROADCAST, boolInt(on))
}

// SetTTL sets the unicast time to live (IPv6: hop limit), 1 to 255.
func (t *Transport) SetTTL(ttl int) error {
	if ttl < 1 || ttl > 255 {
		return EINVAL
	}
	return t.setIPInt(unix.IP_TTL, unix.IPV6_UNICAST_HOPS, ttl)
}

// SetMulticastTTL sets the multicast time to live (IPv6: hop limit), 0 to
// 255; 1, the kernel's default, keeps datagrams on the local network.
func (t *Transport) SetMulticastTTL(ttl int) error {
	if ttl < 0 || ttl > 255 {
		return EINVAL
	}
	return t.setIPInt(unix.IP_MULTICAST_TTL, unix.IPV6_MULTICAST_HOPS, ttl)
}

// SetMulticastLoop says whether the socket's own multicast datagrams come
// back to the sending host's members (the kernel's default is on).
func (t *Transport) SetMulticastLoop(on bool) error {
	return t.setIPInt(unix.IP_MULTICAST_LOOP, unix.IPV6_MULTICAST_LOOP, boolInt(on))
}

// SetMulticastInterface picks the interface multicast datagrams leave by:
// on IPv4 the interface's address, on IPv6 an address whose zone names
// the interface ("::%eth0", "::%2"); "" lets the kernel choose.
func (t *Transport) SetMulticastInterface(iface string) error {
	fam, err := t.udpFamily()
	if err != nil {
		return err
	}
	if fam == unix.AF_INET {
		a, err := ifaceAddr4(iface)
		if err != nil {
			return err
		}
		return unix.SetsockoptInet4Addr(int(t.fd), unix.IPPROTO_IP, unix.IP_MULTICAST_IF, a)
	}
	idx, err := ifaceIndex6(iface)
	if err != nil {
		return err
	}
	return unix.SetsockoptInt(int(t.fd), unix.IPPROTO_IPV6, unix.IPV6_MULTICAST_IF, idx)
}

// SetMembership joins (Join) or leaves (Leave) the multicast group on the
// interface iface names (as SetMulticastInterface; "": the kernel's
// choice). Joining a group twice is -EADDRINUSE, leaving one not joined
// -EADDRNOTAVAIL, from the kernel.
func (t *Transport) SetMembership(group, iface string, op int) error {
	m, err := t.membershipOf(group, iface, op)
	if err != nil {
		return err
	}
	if m.fam == unix.AF_INET {
		opt := unix.IP_ADD_MEMBERSHIP
		if op == Leave {
			opt = unix.IP_DROP_MEMBERSHIP
		}
		return unix.SetsockoptIPMreq(int(t.fd), unix.IPPROTO_IP, opt, &unix.IPMreq{Multiaddr: m.group.As4(), Interface: m.iface4})
	}
	opt := unix.IPV6_JOIN_GROUP
	if op == Leave {
		opt = unix.IPV6_LEAVE_GROUP
	}
	return unix.SetsockoptIPv6Mreq(int(t.fd), unix.IPPROTO_IPV6, opt, &unix.IPv6Mreq{Multiaddr: m.group.As16(), Interface: uint32(m.ifindex)})
}

// SetSourceMembership joins or leaves the group for datagrams from source
// only (source-specific multicast, RFC 4607); iface as SetMembership.
func (t *Transport) SetSourceMembership(group, iface, source string, op int) error {
	m, err := t.membershipOf(group, iface, op)
	if err != nil {
		return err
	}
	src, err := netip.ParseAddr(source)
	if err != nil || src.Is4() != (m.fam == unix.AF_INET) || src.IsMulticast() {
		return EINVAL
	}
	if m.fam == unix.AF_INET {
		return setSourceMembership4(int(t.fd), m.group.As4(), m.iface4, src.As4(), op == Join)
	}
	return setSourceMembership6(int(t.fd), m.group, src, m.ifindex, op == Join)
}

// membership is a membership call's checked arguments: the socket's
// family, the group, and the interface (an address on IPv4, an index on
// IPv6).
type membership struct {
	fam     int
	group   netip.Addr
	iface4  [4]byte
	ifindex int
}

func (t *Transport) membershipOf(group, iface string, op int) (m membership, err error) {
	if m.fam, err = t.udpFamily(); err != nil {
		return m, err
	}
	if m.group, err = multicastGroup(group, m.fam); err != nil || (op != Join && op != Leave) {
		return m, EINVAL
	}
	if m.fam == unix.AF_INET {
		m.iface4, err = ifaceAddr4(iface)
	} else {
		m.ifindex, err = ifaceIndex6(iface)
	}
	return m, err
}

// multicastGroup parses a group address of the socket's family.
func multicastGroup(group string, fam int) (netip.Addr, error) {
	g, err := netip.ParseAddr(group)
	if err != nil || !g.IsMulticast() || g.Is4() != (fam == unix.AF_INET) || g.Zone() != "" {
		return netip.Addr{}, EINVAL
	}
	return g, nil
}

// ifaceAddr4 parses an IPv4 interface address ("": INADDR_ANY).
func ifaceAddr4(iface string) ([4]byte, error) {
	if iface == "" {
		return [4]byte{}, nil
	}
	a, err := netip.ParseAddr(iface)
	if err != nil || !a.Is4() {
		return [4]byte{}, EINVAL
	}
	return a.As4(), nil
}

// ifaceIndex6 finds the interface an IPv6 interface string names by its
// zone, a name or an index ("": 0, the kernel's choice).
func ifaceIndex6(iface string) (int, error) {
	if iface == "" {
		return 0, nil
	}
	a, err := netip.ParseAddr(iface)
	if err != nil || !a.Is6() || a.Is4In6() {
		return 0, EINVAL
	}
	zone := a.Zone()
	if zone == "" {
		return 0, nil
	}
	if n, err := strconv.Atoi(zone); err == nil && n >= 0 {
		return n, nil
	}
	ifi, err := net.InterfaceByName(zone)
	if err != nil {
		return 0, EINVAL
	}
	return ifi.Index, nil
}

func boolInt(on bool) int {
	if on {
		return 1
	}
	return 0
}

// setsockoptBytes sets an option whose value is a C struct laid out in b
// (x/sys/unix's string setter passes the bytes as they are).
func setsockoptBytes(fd, level, opt int, b []byte) error {
	return unix.SetsockoptString(fd, level, opt, string(b))
}
