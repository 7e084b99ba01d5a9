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
	if n := unsafe.Sizeof(Transport{}); n > 96 {
		t.Errorf("Transport is %d bytes, over the 96-byte size class (the next is 112)", n)
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
			fd, err := unix.Socket(unix.AF_INET, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
			if err != nil {
				t.Fatal(err)
			}
			clients = append(clients, fd)
			if err := unix.Connect(fd, &unix.SockaddrInet4{Port: port, Addr: [4]byte{127, 0, 0, 1}}); err != nil {
				t.Fatal(err)
			}
		}
		want := len(made) + n
		runUntil(t, l, 10*time.Second, func() bool { return len(made) == want })
		l.RunOnce(false)
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
	// 96: the Transport's size class; a few bytes of slack for what the
	// runtime and the test allocate meanwhile.
	if per > 96+8 {
		t.Fatalf("an idle accepted connection keeps %d bytes of Go heap, want the Transport's 96", per)
	}
	t.Logf("%d bytes of Go heap per idle accepted connection", per)
}
