// SPDX-License-Identifier: MIT

package libloop

import (
	"runtime"
	"testing"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

// What an idle connection costs a server: its Transport and its fd's
// watch slot. A server holds one of each per connection, tens of
// thousands at once, so each record stays in its Go size class.
func TestConnectionRecordSizes(t *testing.T) {
	if n := unsafe.Sizeof(Transport{}); n > 80 {
		t.Errorf("Transport is %d bytes, over the 80-byte size class (the next is 96)", n)
	}
	if n := unsafe.Sizeof(fdWatch{}); n > 24 {
		t.Errorf("fdWatch is %d bytes, want 24 (a slot per fd in the fd table)", n)
	}
}

// Accepting an idle connection allocates its Transport and nothing else
// that stays: no write state, no read buffer, no handle (the fd table's
// slots, counted above, are taken out here).
func TestIdleConnectionHeap(t *testing.T) {
	const n = 1000
	l := newTestLoop(t)
	var made []*Transport
	srv, err := l.ListenTCP("127.0.0.1", 0, n, 0, func(ev *Event) bool {
		if ev.Kind == ConnectionMade {
			made = append(made, ev.T)
		}
		return true
	})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	port, _ := srv.Port()
	clients := make([]int, 0, 2*n) // made and clients grow no more while measured
	defer func() {
		for _, fd := range clients {
			unix.Close(fd)
		}
	}()
	// accept connects n clients (the kernel completes each handshake into
	// the backlog) and runs the loop until it has accepted them all.
	accept := func() {
		for i := 0; i < n; i++ {
			fd, err := unix.Socket(unix.AF_INET, unix.SOCK_STREAM, 0)
			if err != nil {
				t.Fatal(err)
			}
			clients = append(clients, fd)
			if err := unix.Connect(fd, &unix.SockaddrInet4{Port: port, Addr: [4]byte{127, 0, 0, 1}}); err != nil {
				t.Fatal(err)
			}
		}
		// Non-blocking iterations: no timer to bound a wait, so nothing of
		// the test's own grows with the number of iterations.
		want, end := len(made)+n, time.Now().Add(10*time.Second)
		for len(made) < want && time.Now().Before(end) {
			if err := l.RunOnce(true); err != nil {
				t.Fatal(err)
			}
		}
		if len(made) != want {
			t.Fatalf("accepted %d of %d", len(made), want)
		}
	}
	// heap is the live Go heap less the fd table's chunks.
	heap := func() int64 {
		var m runtime.MemStats
		runtime.GC() // twice: a sync.Pool's victims go in the second
		runtime.GC()
		runtime.ReadMemStats(&m)
		slots := 0
		for _, c := range l.fds.chunks {
			slots += len(c)
		}
		return int64(m.HeapAlloc) - int64(slots)*int64(unsafe.Sizeof(fdWatch{}))
	}
	// The first batch grows what a loop keeps for any number of
	// connections (the event and ready queues); the second, as large,
	// costs only what each connection keeps.
	made = make([]*Transport, 0, 2*n)
	accept()
	before := heap()
	accept()
	per := (heap() - before) / n
	// 80: the Transport's size class; slack for what the loop's queues
	// (sized by the largest accept burst) and the runtime keep meanwhile,
	// less than the 16 bytes of the next size class.
	if per > 80+15 {
		t.Fatalf("an idle accepted connection keeps %d bytes of Go heap, want the Transport's 80", per)
	}
	t.Logf("%d bytes of Go heap per idle accepted connection", per)
}

// Water marks other than the defaults live in the loop's map, not in the
// Transport: they read back as set, go when set back to the defaults, and
// go with a transport that ends, so the map holds no closed transport.
func TestOwnWaterMarksLeaveWithTransport(t *testing.T) {
	l := newTestLoop(t)
	ends, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_STREAM, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer unix.Close(ends[1])
	tr, err := l.OpenTransport(ends[0], Stream, func(*Event) bool { return true })
	if err != nil {
		t.Fatal(err)
	}
	if err := tr.SetWriteBufferLimits(1<<20, 1<<10); err != nil {
		t.Fatal(err)
	}
	if h, lo := tr.WriteBufferLimits(); h != 1<<20 || lo != 1<<10 || len(l.io.marks) != 1 {
		t.Fatalf("own marks read %d, %d with %d kept", h, lo, len(l.io.marks))
	}
	tr.SetWriteBufferLimits(0, 0)
	if h, lo := tr.WriteBufferLimits(); h != DefaultHighWater || lo != DefaultLowWater || len(l.io.marks) != 0 {
		t.Fatalf("defaults read %d, %d with %d kept", h, lo, len(l.io.marks))
	}
	tr.SetWriteBufferLimits(1<<20, 1<<10)
	tr.Close()
	if len(l.io.marks) != 0 {
		t.Fatalf("a closed transport's marks are still kept (%d)", len(l.io.marks))
	}
	if err := tr.SetWriteBufferLimits(1<<20, 1<<10); err != nil || len(l.io.marks) != 0 {
		t.Fatalf("marks set on a closed transport: %v, %d kept", err, len(l.io.marks))
	}
}
