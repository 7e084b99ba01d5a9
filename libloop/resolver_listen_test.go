// SPDX-License-Identifier: MIT

package libloop

import (
	"net/netip"
	"sync"
	"testing"
	"time"
)

// lookupLog records the lookups the test hook made and their threads.
type lookupLog struct {
	mu      sync.Mutex
	threads []int
}

func (g *lookupLog) count() int {
	g.mu.Lock()
	defer g.mu.Unlock()
	return len(g.threads)
}

// slowLookups makes every lookup take delay and records it: "slow.test" is
// 127.0.0.1, any other name does not resolve. The real lookup comes back
// when the test ends.
func slowLookups(t *testing.T, delay time.Duration) *lookupLog {
	t.Helper()
	g := &lookupLog{}
	real := lookupHostHook
	lookupHostHook = func(host string) ([]netip.Addr, error) {
		g.mu.Lock()
		g.threads = append(g.threads, threadID())
		g.mu.Unlock()
		time.Sleep(delay)
		if host == "slow.test" {
			return []netip.Addr{netip.AddrFrom4([4]byte{127, 0, 0, 1})}, nil
		}
		return nil, ENONAME
	}
	t.Cleanup(func() { lookupHostHook = real })
	return g
}

// ListenTCPWith and OpenUDPWith look a name up on the resolver pool: the
// loop keeps running its timers meanwhile, the lookup's thread is not the
// loop's, and the server / transport then works.
func TestListenByNameOffLoopThread(t *testing.T) {
	g := slowLookups(t, 200*time.Millisecond)
	l := newTestLoop(t)
	loopThread := 0
	ticks := 0
	var tick func()
	tick = func() {
		loopThread = threadID()
		ticks++
		l.CallLater(0.01, tick)
	}
	l.CallSoon(tick)
	var srv *Server
	var udp *Transport
	var srvErr, udpErr error
	gotSrv, gotUDP := false, false
	if err := l.ListenTCPWith("slow.test", 0, ListenOptions{}, nil, func(s *Server, err error) {
		srv, srvErr, gotSrv = s, err, true
	}); err != nil {
		t.Fatal(err)
	}
	if err := l.OpenUDPWith(UDPOptions{LocalHost: "slow.test"}, func(*Event) bool { return false },
		func(tr *Transport, err error) { udp, udpErr, gotUDP = tr, err, true }); err != nil {
		t.Fatal(err)
	}
	if gotSrv || gotUDP {
		t.Fatal("done ran inside the call")
	}
	ticksAtStart := ticks
	runUntil(t, l, 10*time.Second, func() bool { return gotSrv && gotUDP })
	if srvErr != nil || udpErr != nil {
		t.Fatalf("listen %v, open %v", srvErr, udpErr)
	}
	defer srv.Close()
	defer udp.Abort()
	if ticks-ticksAtStart < 5 {
		t.Errorf("the loop ran %d timer ticks during a 200 ms lookup: it was blocked", ticks-ticksAtStart)
	}
	if port, err := srv.Port(); err != nil || port == 0 {
		t.Errorf("server port %d, %v", port, err)
	}
	raw, err := udp.SockName()
	if err != nil || SockaddrPort(raw) == 0 {
		t.Errorf("UDP sockname %v, %v", raw, err)
	}
	if g.count() != 2 {
		t.Fatalf("%d lookups, want 2", g.count())
	}
	for _, id := range g.threads {
		if id == loopThread {
			t.Errorf("a lookup ran on the loop thread (%d)", id)
		}
	}
}

// The synchronous calls: an address or "localhost" needs no lookup and
// works while the loop runs; a name while it runs is ENEEDASYNC (no lookup
// made); a name while it does not run is looked up in place.
func TestListenSyncNames(t *testing.T) {
	g := slowLookups(t, 0)
	l := newTestLoop(t)
	var inLoop []error
	l.CallSoon(func() {
		for _, host := range []string{"127.0.0.1", "localhost", "", "slow.test"} {
			s, err := l.ListenTCP(host, 0, 0, 0, nil)
			if err == nil {
				s.Close()
			}
			inLoop = append(inLoop, err)
		}
		_, err := l.OpenUDP("slow.test", 0, "", 0, 0, nil)
		inLoop = append(inLoop, err)
		_, err = l.OpenUDP("", 0, "slow.test", 9, 0, nil)
		inLoop = append(inLoop, err)
		l.Stop()
	})
	if err := l.RunForever(); err != nil {
		t.Fatal(err)
	}
	want := []error{nil, nil, nil, ENEEDASYNC, ENEEDASYNC, ENEEDASYNC}
	for i := range want {
		if inLoop[i] != want[i] {
			t.Errorf("call %d on the running loop: %v, want %v", i, inLoop[i], want[i])
		}
	}
	if g.count() != 0 {
		t.Errorf("%d lookups made by refused calls", g.count())
	}
	s, err := l.ListenTCP("slow.test", 0, 0, 0, nil)
	if err != nil {
		t.Fatalf("ListenTCP by name, loop not running: %v", err)
	}
	s.Close()
	if _, err := l.ListenTCP("nowhere.test", 0, 0, 0, nil); err != ENONAME {
		t.Fatalf("ListenTCP(nowhere.test): %v, want ENONAME", err)
	}
}

// Bad input is refused by the call itself; a name that does not resolve
// reaches done as ENONAME.
func TestListenWithBadInput(t *testing.T) {
	slowLookups(t, 0)
	l := newTestLoop(t)
	noop := func(*Server, error) {}
	for _, c := range []struct {
		port int
		o    ListenOptions
		done ListenFunc
	}{{-1, ListenOptions{}, noop}, {70000, ListenOptions{}, noop}, {0, ListenOptions{Backlog: -1}, noop},
		{0, ListenOptions{Flags: 8}, noop}, {0, ListenOptions{}, nil}} {
		if err := l.ListenTCPWith("127.0.0.1", c.port, c.o, nil, c.done); err != EINVAL {
			t.Errorf("ListenTCPWith(port %d, %+v): %v, want EINVAL", c.port, c.o, err)
		}
	}
	for _, o := range []UDPOptions{{}, {LocalPort: -1, LocalHost: "127.0.0.1"}, {RemoteHost: "127.0.0.1", RemotePort: 1 << 20},
		{LocalHost: "127.0.0.1", Flags: 4}} {
		if err := l.OpenUDPWith(o, nil, func(*Transport, error) {}); err != EINVAL {
			t.Errorf("OpenUDPWith(%+v): %v, want EINVAL", o, err)
		}
	}
	var got error
	done := false
	if err := l.ListenTCPWith("nowhere.test", 0, ListenOptions{}, nil, func(s *Server, err error) { got, done = err, true }); err != nil {
		t.Fatal(err)
	}
	runUntil(t, l, 5*time.Second, func() bool { return done })
	if got != ENONAME {
		t.Fatalf("ListenTCPWith(nowhere.test): %v, want ENONAME", got)
	}
	l.Close()
	if err := l.ListenTCPWith("127.0.0.1", 0, ListenOptions{}, nil, noop); err != ECLOSED {
		t.Fatalf("on a closed loop: %v, want ECLOSED", err)
	}
}
