// SPDX-License-Identifier: MIT

package libloop

// UDP socket options (ll_udp_set_*): each on an open UDP transport of the
// family it was opened with. Errors: EINVAL (not UDP, a value out of range,
// an address that does not parse or is of the other family), ECLOSED, and
// the kernel's (an Error matching EADDRINUSE for a second join,
// EADDRNOTAVAIL for leaving a group not joined). An interface is, on IPv4,
// its address ("127.0.0.1"); on IPv6 an address whose zone names it
// ("::%eth0"); "" lets the kernel choose.

// Join and Leave are the membership calls' op (LL_JOIN, LL_LEAVE).
const (
	Join  = 1
	Leave = 2
)

// SetBroadcast allows sending to broadcast addresses (SO_BROADCAST).
func (t *Transport) SetBroadcast(on bool) error {
	return check(t.raw().UDPSetBroadcast(t.id, boolArg(on)))
}

// SetTTL sets the unicast time to live (IPv6: hop limit), 1 to 255.
func (t *Transport) SetTTL(ttl int) error {
	if !fitsInt32(ttl) {
		return EINVAL
	}
	return check(t.raw().UDPSetTTL(t.id, int32(ttl)))
}

// SetMulticastTTL sets the multicast time to live (IPv6: hop limit), 0 to 255.
func (t *Transport) SetMulticastTTL(ttl int) error {
	if !fitsInt32(ttl) {
		return EINVAL
	}
	return check(t.raw().UDPSetMulticastTTL(t.id, int32(ttl)))
}

// SetMulticastLoop says whether this host's members hear the socket's own
// multicast datagrams.
func (t *Transport) SetMulticastLoop(on bool) error {
	return check(t.raw().UDPSetMulticastLoop(t.id, boolArg(on)))
}

// SetMulticastInterface picks the interface multicast datagrams leave by.
func (t *Transport) SetMulticastInterface(iface string) error {
	i, err := optCString(iface)
	if err != nil {
		return err
	}
	defer i.Free()
	return check(t.raw().UDPSetMulticastInterface(t.id, i.ptr()))
}

// SetMembership joins (Join) or leaves (Leave) a multicast group on iface.
func (t *Transport) SetMembership(group, iface string, op int) error {
	if !fitsInt32(op) {
		return EINVAL
	}
	return t.withCStrings(func(s []*CBuf) int32 {
		return t.raw().UDPSetMembership(t.id, s[0].ptr(), s[1].ptr(), int32(op))
	}, group, iface)
}

// SetSourceMembership joins or leaves group for source's datagrams only
// (source-specific multicast).
func (t *Transport) SetSourceMembership(group, iface, source string, op int) error {
	if !fitsInt32(op) {
		return EINVAL
	}
	return t.withCStrings(func(s []*CBuf) int32 {
		return t.raw().UDPSetSourceMembership(t.id, s[0].ptr(), s[1].ptr(), s[2].ptr(), int32(op))
	}, group, iface, source)
}

// withCStrings calls fn with each string in C memory ("" as NULL) and
// frees them after.
func (t *Transport) withCStrings(fn func([]*CBuf) int32, strs ...string) error {
	bufs := make([]*CBuf, len(strs))
	defer func() {
		for _, b := range bufs {
			b.Free()
		}
	}()
	for i, s := range strs {
		b, err := optCString(s)
		if err != nil {
			return err
		}
		bufs[i] = b
	}
	return check(fn(bufs))
}

// boolArg is C's truth value for on.
func boolArg(on bool) int32 {
	if on {
		return 1
	}
	return 0
}
