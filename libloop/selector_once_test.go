// SPDX-License-Identifier: MIT

//go:build linux

package libloop

import (
	"testing"

	"golang.org/x/sys/unix"
)

// An fd watched with evOnce (a pidfd's exit) is reported by one poll only,
// however long it stays ready, until control re-arms it.
func TestSelectorOnceReportsOnceUntilRearmed(t *testing.T) {
	s, err := newSelector()
	if err != nil {
		t.Fatal(err)
	}
	defer s.close()
	var p [2]int
	if err := unix.Pipe2(p[:], unix.O_CLOEXEC); err != nil {
		t.Fatal(err)
	}
	defer unix.Close(p[0])
	defer unix.Close(p[1])
	if err := s.control(p[0], 0, evRead|evOnce); err != nil {
		t.Fatal(err)
	}
	unix.Write(p[1], []byte{1}) // readable from now on (never read)
	count := func() int {
		evs, _, err := s.poll(0, nil, false)
		if err != nil {
			t.Fatal(err)
		}
		return len(evs)
	}
	if n := count(); n != 1 {
		t.Fatalf("first poll: %d events, want 1", n)
	}
	for i := 0; i < 3; i++ {
		if n := count(); n != 0 {
			t.Fatalf("poll %d after the event fired: %d events, want 0", i+2, n)
		}
	}
	if err := s.control(p[0], evRead|evOnce, evRead|evOnce); err != nil {
		t.Fatal(err)
	}
	if n := count(); n != 1 {
		t.Fatalf("poll after re-arming: %d events, want 1", n)
	}
	if n := count(); n != 0 {
		t.Fatalf("second poll after re-arming: %d events, want 0", n)
	}
}
