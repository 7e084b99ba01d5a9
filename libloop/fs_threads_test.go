// SPDX-License-Identifier: MIT

package libloop

import (
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// threadsHost lends its own threads to the loop's file calls (as capi's
// C pool): QueueFS hands ids to its workers, or holds them (hold) until
// released, or refuses them (refuse).
type threadsHost struct {
	recordingHost
	l       *Loop
	refuse  bool
	hold    bool
	mu      sync.Mutex
	held    []uint64
	queued  atomic.Int32
	running sync.WaitGroup
	// the host's own calls (StartHostFS): started ones and withdrawn ones
	started   map[uint64]bool
	withdrawn []uint64
}

// WithdrawFS: the host's own calls (StartHostFS) are withdrawn while
// not started.
func (h *threadsHost) WithdrawFS(token uint64) bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.started[token] {
		return false
	}
	h.withdrawn = append(h.withdrawn, token)
	return true
}

func (h *threadsHost) QueueFS(id uint64) bool {
	if h.refuse {
		return false
	}
	h.queued.Add(1)
	if h.hold {
		h.mu.Lock()
		h.held = append(h.held, id)
		h.mu.Unlock()
		return true
	}
	h.running.Add(1)
	go func() {
		defer h.running.Done()
		h.l.RunFSJob(id)
	}()
	return true
}

// release runs the held jobs on the host's threads and waits for them.
func (h *threadsHost) release() {
	h.mu.Lock()
	ids := h.held
	h.held = nil
	h.mu.Unlock()
	for _, id := range ids {
		h.running.Add(1)
		go func() {
			defer h.running.Done()
			h.l.RunFSJob(id)
		}()
	}
	h.running.Wait()
}

func threadsLoop(t *testing.T) (*Loop, *threadsHost) {
	l := newTestLoop(t)
	h := &threadsHost{l: l}
	l.SetHost(h)
	return l, h
}

// With a host that lends threads, the file calls of every form run there
// (the host saw each) and not on the core's pool: a future's read, a
// stat, and a host read with a callback all complete with their values.
func TestFSThreadsRunEveryFileCall(t *testing.T) {
	l, h := threadsLoop(t)
	path := filepath.Join(t.TempDir(), "f")
	if err := os.WriteFile(path, []byte("hello"), 0o600); err != nil {
		t.Fatal(err)
	}
	fd, err := unix.Open(path, unix.O_RDONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer unix.Close(fd)
	buf := make([]byte, 8)
	rf, err := l.FSRead(fd, buf, 0)
	if err != nil {
		t.Fatal(err)
	}
	var st unix.Stat_t
	sf, err := l.FSStat(path, &st)
	if err != nil {
		t.Fatal(err)
	}
	if err := l.FSReadHost(fd, make([]byte, 2), 1, HostCall{Fn: 1, Kind: HostIO}); err != nil {
		t.Fatal(err)
	}
	runUntil(t, l, 5*time.Second, func() bool { return rf.Done() && sf.Done() && len(h.got) == 1 })
	if n, err := rf.Result(); err != nil || n != 5 || string(buf[:5]) != "hello" {
		t.Fatalf("read: %d %v %q", n, err, buf[:5])
	}
	if _, err := sf.Result(); err != nil || st.Size != 5 {
		t.Fatalf("stat: %v size %d", err, st.Size)
	}
	if q := h.queued.Load(); q != 3 {
		t.Fatalf("the host queued %d calls, want 3", q)
	}
	if w := l.fsPool.workers; w != 0 {
		t.Fatalf("the core's pool started %d workers beside the host's", w)
	}
	h.running.Wait()
	if alive, err := l.Run(RunModeDefault); alive || err != nil { // returns: nothing left to wait for
		t.Fatalf("alive %v, err %v", alive, err)
	}
}

// A host with no thread to lend (QueueFS false): the core's pool runs the
// call.
func TestFSThreadsRefusedRunsOnTheCorePool(t *testing.T) {
	l, h := threadsLoop(t)
	h.refuse = true
	f, err := l.RunInFS(func() (uintptr, int) { return 7, 0 })
	if err != nil {
		t.Fatal(err)
	}
	runUntil(t, l, 5*time.Second, f.Done)
	if v, err := f.Result(); err != nil || v != 7 {
		t.Fatalf("%d %v", v, err)
	}
}

// A call held by the host keeps the loop alive; cancelled before the host
// starts it, it never runs; one the host still held at Close never runs
// either, and Close forgets it (RunFSJob afterwards is a no-op).
func TestFSThreadsWithdrawAndClose(t *testing.T) {
	l, h := threadsLoop(t)
	h.hold = true
	var ran atomic.Int32
	work := func() (uintptr, int) { ran.Add(1); return 0, 0 }
	cancelled, err := l.RunInFS(work)
	if err != nil {
		t.Fatal(err)
	}
	if !l.Alive() {
		t.Fatal("a call queued on the host does not keep the loop alive")
	}
	if !cancelled.Cancel("") {
		t.Fatal("a call the host has not started could not be cancelled")
	}
	h.release()
	runUntil(t, l, 5*time.Second, func() bool { return !l.Alive() })
	if ran.Load() != 0 {
		t.Fatal("a withdrawn call ran")
	}
	if _, err := l.RunInFS(work); err != nil {
		t.Fatal(err)
	}
	l.Close()
	h.release()
	if ran.Load() != 0 {
		t.Fatal("a call dropped at Close ran")
	}
	if n := l.fsPool.pending.Load(); n != 0 {
		t.Fatalf("%d calls still pending after Close", n)
	}
}

// A call the host makes itself (StartHostFS): its future keeps the loop
// alive until FinishHostFS delivers the value or the failure; cancelled
// before the host starts it, it is withdrawn through the host and later
// outcomes are ignored; a started one cannot be cancelled; one the host
// could not queue (DropHostFS) leaves nothing pending; at Close the
// pending ones are dropped.
func TestFSThreadsHostCalls(t *testing.T) {
	l, h := threadsLoop(t)
	h.started = map[uint64]bool{2: true}
	ok, err := l.StartHostFS(1, "read failed")
	if err != nil {
		t.Fatal(err)
	}
	started, _ := l.StartHostFS(2, "read failed")
	withdrawn, _ := l.StartHostFS(3, "read failed")
	failed, _ := l.StartHostFS(4, "write failed")
	if !l.Alive() {
		t.Fatal("host calls in flight do not keep the loop alive")
	}
	if started.Cancel("") {
		t.Fatal("a started host call was cancelled")
	}
	if !withdrawn.Cancel("") || len(h.withdrawn) != 1 || h.withdrawn[0] != 3 {
		t.Fatalf("withdrawing a queued host call: the host saw %v", h.withdrawn)
	}
	l.FinishHostFS(ok, 5, 0)
	l.FinishHostFS(started, 6, 0)
	l.FinishHostFS(withdrawn, 0, int(ECANCELLED))
	l.FinishHostFS(failed, 0, -int(unix.EBADF))
	if v, err := ok.Result(); v != 5 || err != nil {
		t.Fatalf("value %d %v", v, err)
	}
	if v, err := started.Result(); v != 6 || err != nil {
		t.Fatalf("started: %d %v", v, err)
	}
	if withdrawn.State() != Cancelled {
		t.Fatal("the withdrawn call's future is not cancelled")
	}
	if _, err := failed.Result(); Code(err) != -int(unix.EBADF) {
		t.Fatalf("failure: %v", err)
	}
	dropped, _ := l.StartHostFS(5, "read failed")
	l.DropHostFS(dropped)
	if alive, err := l.Run(RunModeDefault); alive || err != nil {
		t.Fatalf("alive %v, err %v with every host call delivered", alive, err)
	}
	if _, err := l.StartHostFS(6, "read failed"); err != nil {
		t.Fatal(err)
	}
	l.Close()
	if n := l.fsPool.pending.Load(); n != 0 {
		t.Fatalf("%d calls pending after Close", n)
	}
	if _, err := l.StartHostFS(7, "read failed"); err != ECLOSED {
		t.Fatalf("after Close: %v", err)
	}
}
