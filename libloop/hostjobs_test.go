// SPDX-License-Identifier: MIT

package libloop

import (
	"runtime"
	"sync/atomic"
	"testing"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

// jobsHost is a host with its own worker threads (as capi's file pool):
// a job is outstanding until the loop runs the outcome it posted.
type jobsHost struct {
	recordingHost
	outstanding atomic.Int32
	posted      atomic.Int32 // outcomes posted, not taken
	ran         int          // outcomes run by the loop
}

func (h *jobsHost) Outstanding() bool { return h.outstanding.Load() > 0 }
func (h *jobsHost) Pending() bool     { return h.posted.Load() > 0 }
func (h *jobsHost) BeforeBlock() bool { return h.Pending() }
func (h *jobsHost) Take() HostBatch {
	n := h.posted.Swap(0)
	if n == 0 {
		return nil
	}
	return &jobsBatch{h: h, n: int(n)}
}

type jobsBatch struct {
	h *jobsHost
	n int
}

func (b *jobsBatch) Run() {
	b.h.ran += b.n
	b.h.outstanding.Add(-int32(b.n))
	b.n = 0
}
func (b *jobsBatch) Drop()    { b.n = 0 }
func (b *jobsBatch) Len() int { return b.n }

// post is a worker's end of a job: the outcome is posted and the loop
// woken; the job stays outstanding until the loop runs its outcome
// (HostJobs' rule).
func (h *jobsHost) post(l *Loop) {
	h.posted.Add(1)
	l.Wake()
}

// A host's outstanding job keeps Run(RunModeDefault) going until its
// outcome is posted and run; with none, Run returns at once.
func TestHostJobsKeepTheLoopAlive(t *testing.T) {
	l := newTestLoop(t)
	h := &jobsHost{}
	l.SetHost(h)
	if alive, err := l.Run(RunModeDefault); alive || err != nil {
		t.Fatalf("no jobs: alive %v, err %v", alive, err)
	}
	h.outstanding.Store(2)
	go func() {
		time.Sleep(30 * time.Millisecond)
		h.post(l)
		time.Sleep(30 * time.Millisecond)
		h.post(l)
	}()
	start := time.Now()
	if alive, err := l.Run(RunModeDefault); alive || err != nil {
		t.Fatalf("alive %v, err %v", alive, err)
	}
	if h.ran != 2 {
		t.Fatalf("ran %d outcomes, want 2", h.ran)
	}
	if d := time.Since(start); d < 50*time.Millisecond {
		t.Fatalf("Run returned after %v, before the second job was posted", d)
	}
}

// FSWorkers reports the file pool's bound: the default, then what
// SetFSWorkers set; a refused value leaves it.
func TestFSWorkersReportsTheBound(t *testing.T) {
	l := newTestLoop(t)
	if n := l.FSWorkers(); n != DefaultFSWorkers {
		t.Fatalf("default bound %d", n)
	}
	if err := l.SetFSWorkers(2); err != nil {
		t.Fatal(err)
	}
	if err := l.SetFSWorkers(0); err != EINVAL {
		t.Fatalf("SetFSWorkers(0): %v", err)
	}
	if n := l.FSWorkers(); n != 2 {
		t.Fatalf("bound %d after SetFSWorkers(2)", n)
	}
}

// An 8-byte write of 1 to WakeFD, from a thread the loop does not know,
// ends a poll blocked with nothing else to wake it.
func TestWakeFDWakesThePoll(t *testing.T) {
	l := newTestLoop(t)
	fd := l.WakeFD()
	if runtime.GOOS != "linux" {
		if fd != -1 {
			t.Fatalf("WakeFD %d where the selector has no eventfd", fd)
		}
		return
	}
	if fd < 0 {
		t.Fatalf("WakeFD %d", fd)
	}
	// A timer far off keeps the poll from returning by itself.
	tm, err := l.CallLater(3600, func() {})
	if err != nil {
		t.Fatal(err)
	}
	defer tm.Cancel()
	go func() {
		time.Sleep(30 * time.Millisecond)
		one := uint64(1)
		unix.Write(fd, (*[8]byte)(unsafe.Pointer(&one))[:])
	}()
	done := make(chan struct{})
	go func() {
		l.Run(RunModeOnce)
		close(done)
	}()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		l.Wake()
		<-done
		t.Fatal("the poll did not return on a write to WakeFD")
	}
}
