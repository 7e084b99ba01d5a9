// SPDX-License-Identifier: MIT

package tests

import (
	"net/netip"
	"syscall"
	"testing"
	"time"

	ll "github.com/libloop/libloop/bindings/go"
)

// The option setters reach the socket through the purego binding: read
// back with getsockopt on the transport's fd.
func TestUDPOptionsSetters(t *testing.T) {
	l := newLoop(t)
	tr := openUDP(t, l, "127.0.0.1", 0, "", 0, &ll.ProtocolFuncs{})
	defer tr.Close()
	fd, err := tr.FD()
	if err != nil {
		t.Fatal(err)
	}
	get := func(level, opt int) int {
		t.Helper()
		v, err := syscall.GetsockoptInt(fd, level, opt)
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	expectErr(t, "SetBroadcast", tr.SetBroadcast(true), 0)
	if get(syscall.SOL_SOCKET, syscall.SO_BROADCAST) != 1 {
		t.Error("SO_BROADCAST not set")
	}
	expectErr(t, "SetTTL", tr.SetTTL(21), 0)
	if v := get(syscall.IPPROTO_IP, syscall.IP_TTL); v != 21 {
		t.Errorf("IP_TTL = %d", v)
	}
	expectErr(t, "SetMulticastTTL", tr.SetMulticastTTL(2), 0)
	if v := get(syscall.IPPROTO_IP, syscall.IP_MULTICAST_TTL); v != 2 {
		t.Errorf("IP_MULTICAST_TTL = %d", v)
	}
	expectErr(t, "SetMulticastLoop", tr.SetMulticastLoop(false), 0)
	if v := get(syscall.IPPROTO_IP, syscall.IP_MULTICAST_LOOP); v != 0 {
		t.Errorf("IP_MULTICAST_LOOP = %d", v)
	}
	expectErr(t, "SetMulticastInterface", tr.SetMulticastInterface("127.0.0.1"), 0)
	expectErr(t, "TTL 0", tr.SetTTL(0), cEINVAL)
	expectErr(t, "TTL beyond int32", tr.SetTTL(1<<40), cEINVAL)
	expectErr(t, "op beyond int32", tr.SetMembership("239.1.1.1", "", 1<<32+1), cEINVAL)
	expectErr(t, "unicast group", tr.SetMembership("10.1.1.1", "", ll.Join), cEINVAL)
	expectErr(t, "IPv6 interface", tr.SetMulticastInterface("::1"), cEINVAL)
	expectErr(t, "no source", tr.SetSourceMembership("232.1.1.1", "", "", ll.Join), cEINVAL)
	if v := get(syscall.IPPROTO_IP, syscall.IP_TTL); v != 21 {
		t.Errorf("refused calls changed IP_TTL to %d", v)
	}
}

// A group member hears a multicast datagram sent on loopback.
func TestUDPOptionsMulticast(t *testing.T) {
	l := newLoop(t)
	var got []string
	member := openUDP(t, l, "0.0.0.0", 0, "", 0, &ll.ProtocolFuncs{
		Datagram: func(_ *ll.Transport, d []byte, _ ll.Addr) {
			got = append(got, string(d))
			l.Stop()
		},
	})
	defer member.Close()
	expectErr(t, "join", member.SetMembership("239.255.79.1", "127.0.0.1", ll.Join), 0)
	if err := member.SetMembership("239.255.79.1", "127.0.0.1", ll.Join); err == nil {
		t.Error("a second join succeeded")
	}
	sender := openUDP(t, l, "127.0.0.1", 0, "", 0, &ll.ProtocolFuncs{})
	defer sender.Close()
	expectErr(t, "interface", sender.SetMulticastInterface("127.0.0.1"), 0)
	me, err := member.SockName()
	if err != nil {
		t.Fatal(err)
	}
	to := netip.AddrPortFrom(netip.MustParseAddr("239.255.79.1"), me.AddrPort.Port())
	expectErr(t, "SendTo group", sender.SendTo([]byte("to the group"), to), 0)
	runNet(t, l, 10*time.Second)
	if len(got) != 1 || got[0] != "to the group" {
		t.Fatalf("member got %q", got)
	}
	expectErr(t, "leave", member.SetMembership("239.255.79.1", "127.0.0.1", ll.Leave), 0)
	member.Close()
	expectErr(t, "after close", member.SetTTL(3), cECLOSED)
}
