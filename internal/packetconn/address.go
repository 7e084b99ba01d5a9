// SPDX-License-Identifier: MIT

package packetconn

import (
	"net"
	"net/netip"
	"syscall"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/libloop/libloop/internal/streamconn"
)

// ListenAddress checks a ListenPacket's network ("udp", "udp4", "udp6")
// and splits its "host:port" address, as net.ListenPacket would; an empty
// host is the wildcard of the network's family (0.0.0.0 for "udp" and
// "udp4", :: for "udp6"). Errors are *net.OpError with Op "listen".
func ListenAddress(network, address string) (host string, port int, err error) {
	opErr := func(err error) error { return &net.OpError{Op: "listen", Net: network, Err: err} }
	switch network {
	case "udp", "udp4", "udp6":
	default:
		return "", 0, opErr(net.UnknownNetworkError(network))
	}
	host, port, err = streamconn.SplitPort(network, address)
	if err != nil {
		return "", 0, opErr(err)
	}
	if host == "" {
		host = "0.0.0.0"
		if network == "udp6" {
			host = "::"
		}
	}
	return host, port, nil
}

// RawToUDPAddr decodes a raw inet struct sockaddr (a datagram's sender, a
// socket's name), or returns nil for anything else. An IPv6 scope id
// becomes the zone naming its interface.
func RawToUDPAddr(raw []byte) *net.UDPAddr {
	var rsa unix.RawSockaddrAny
	n := copy(unsafe.Slice((*byte)(unsafe.Pointer(&rsa)), unsafe.Sizeof(rsa)), raw)
	switch {
	case rsa.Addr.Family == unix.AF_INET && n >= unix.SizeofSockaddrInet4:
		sa := (*unix.RawSockaddrInet4)(unsafe.Pointer(&rsa))
		return &net.UDPAddr{IP: net.IP(append([]byte(nil), sa.Addr[:]...)), Port: netPort(&sa.Port)}
	case rsa.Addr.Family == unix.AF_INET6 && n >= unix.SizeofSockaddrInet6:
		sa := (*unix.RawSockaddrInet6)(unsafe.Pointer(&rsa))
		a := &net.UDPAddr{IP: net.IP(append([]byte(nil), sa.Addr[:]...)), Port: netPort(&sa.Port)}
		if sa.Scope_id != 0 {
			if ifi, err := net.InterfaceByIndex(int(sa.Scope_id)); err == nil {
				a.Zone = ifi.Name
			}
		}
		return a
	}
	return nil
}

// netPort reads a port stored in network byte order.
func netPort(p *uint16) int {
	b := (*[2]byte)(unsafe.Pointer(p))
	return int(b[0])<<8 | int(b[1])
}

// UDPAddrToRaw encodes a as a raw struct sockaddr to send to from a socket
// of the family v6 says: on an IPv4 socket an IPv4 address (or an
// IPv4-mapped IPv6 one) as sockaddr_in; else sockaddr_in6, an IPv4 address
// mapped (a zone names the interface). A port outside 0..65535, an IP of
// no valid length or an unknown zone is EINVAL.
func UDPAddrToRaw(a *net.UDPAddr, v6 bool) ([]byte, error) {
	ip, ok := netip.AddrFromSlice(a.IP)
	if !ok || a.Port < 0 || a.Port > 65535 {
		return nil, syscall.EINVAL
	}
	ip = ip.Unmap()
	port := [2]byte{byte(a.Port >> 8), byte(a.Port)}
	if ip.Is4() && !v6 {
		sa := rawInet4()
		*(*[2]byte)(unsafe.Pointer(&sa.Port)) = port
		sa.Addr = ip.As4()
		return append([]byte(nil), unsafe.Slice((*byte)(unsafe.Pointer(&sa)), unsafe.Sizeof(sa))...), nil
	}
	sa := rawInet6()
	*(*[2]byte)(unsafe.Pointer(&sa.Port)) = port
	sa.Addr = ip.As16()
	if a.Zone != "" {
		ifi, err := net.InterfaceByName(a.Zone)
		if err != nil {
			return nil, syscall.EINVAL
		}
		sa.Scope_id = uint32(ifi.Index)
	}
	return append([]byte(nil), unsafe.Slice((*byte)(unsafe.Pointer(&sa)), unsafe.Sizeof(sa))...), nil
}
