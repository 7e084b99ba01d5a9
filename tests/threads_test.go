// SPDX-License-Identifier: MIT

package tests

import (
	"runtime"
	"sync"
	"testing"
	"time"

	ll "github.com/libloop/libloop/bindings/go"
	"golang.org/x/sys/unix"
)

// Many goroutines (half of them on locked OS threads) post with
// ll_call_soon_threadsafe while the loop is blocked in poll with nothing
// else to do: every callback runs exactly once, each poster's in post order.
func TestThreadsafeFromManyThreads(t *testing.T) {
	loop := newRawLoop(t)
	const posters, each = 8, 300
	seen := make([][]int, posters)
	total := 0
	start := make(chan struct{})
	soon(t, loop, func() { close(start) })
	var wg sync.WaitGroup
	for g := 0; g < posters; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if g%2 == 0 {
				runtime.LockOSThread()
				defer runtime.UnlockOSThread()
			}
			<-start
			for i := 0; i < each; i++ {
				f, a := cb(func(id uint64) {
					seen[g] = append(seen[g], i)
					if total++; total == posters*each {
						raw.Stop(id)
					}
				})
				if rc := raw.CallSoonThreadsafe(loop, f, a); rc != 0 {
					t.Errorf("ll_call_soon_threadsafe = %d", rc)
					return
				}
				if i%50 == 0 {
					time.Sleep(time.Millisecond) // let the loop block again
				}
			}
		}()
	}
	runForever(t, loop, 20*time.Second)
	wg.Wait()
	if total != posters*each {
		t.Fatalf("%d of %d posted callbacks ran", total, posters*each)
	}
	for g, s := range seen {
		if len(s) != each {
			t.Fatalf("poster %d: %d callbacks ran, want %d", g, len(s), each)
		}
		for i, v := range s {
			if v != i {
				t.Fatalf("poster %d: callback %d ran in position %d", g, v, i)
			}
		}
	}
	assertAlive(t, loop)
}

// A post from another thread wakes a loop blocked in poll, even with a
// distant timer (poll timeout ~10 s) or no timer at all (infinite).
func TestThreadsafeWakesBlockedPoll(t *testing.T) {
	for _, withTimer := range []bool{false, true} {
		loop := newRawLoop(t)
		var h uint64
		if withTimer {
			h = later(t, loop, 10, func() { t.Error("10 s timer ran") })
		}
		go func() {
			time.Sleep(50 * time.Millisecond)
			f, a := cb(func(id uint64) { raw.Stop(id) })
			if rc := raw.CallSoonThreadsafe(loop, f, a); rc != 0 {
				t.Errorf("ll_call_soon_threadsafe = %d", rc)
			}
		}()
		start := time.Now()
		runForever(t, loop, 5*time.Second)
		if d := time.Since(start); d < 45*time.Millisecond || d > 3*time.Second {
			t.Fatalf("timer=%v: blocked loop returned after %v", withTimer, d)
		}
		if h != 0 {
			raw.Release(h)
		}
	}
}

func TestWakeupReturnsBlockedRunOnce(t *testing.T) {
	loop := newRawLoop(t)
	later(t, loop, 5, func() {}) // bounds the wait if the wakeup is lost
	go func() {
		time.Sleep(30 * time.Millisecond)
		if rc := raw.Wakeup(loop); rc != 0 {
			t.Errorf("ll_loop_wakeup = %d", rc)
		}
	}()
	start := time.Now()
	expect(t, "ll_loop_run_once(ONCE)", raw.RunOnce(loop, cRunOnce), 0)
	if d := time.Since(start); d < 25*time.Millisecond || d > 5*time.Second {
		t.Fatalf("run_once returned after %v", d)
	}
	assertAlive(t, loop)
}

// Many wakeups coalesce into one: after the loop consumed them, a blocking
// iteration waits for its timer again.
func TestWakeupsCoalesce(t *testing.T) {
	loop := newRawLoop(t)
	var wg sync.WaitGroup
	for g := 0; g < 8; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < 100; i++ {
				if rc := raw.Wakeup(loop); rc != 0 {
					t.Errorf("ll_loop_wakeup = %d", rc)
					return
				}
			}
		}()
	}
	wg.Wait()
	fallback := later(t, loop, 5, func() {}) // bounds the wait if the wakeups are lost
	start := time.Now()
	expect(t, "ll_loop_run_once(ONCE) after wakeups", raw.RunOnce(loop, cRunOnce), 0)
	if d := time.Since(start); d > 3*time.Second {
		t.Fatalf("pending wakeups did not end the blocking poll (%v)", d)
	}
	expect(t, "ll_handle_cancel", raw.HandleCancel(fallback), 0)
	ran := false
	later(t, loop, 0.03, func() { ran = true })
	start = time.Now()
	expect(t, "ll_loop_run_once(ONCE)", raw.RunOnce(loop, cRunOnce), 0)
	if d := time.Since(start); !ran || d < 30*time.Millisecond {
		t.Fatalf("blocking iteration returned after %v, timer ran=%v", d, ran)
	}
}

// onOtherThread runs fn on a fresh locked OS thread and waits for it.
func onOtherThread(fn func()) {
	done := make(chan struct{})
	go func() {
		runtime.LockOSThread()
		defer runtime.UnlockOSThread()
		defer close(done)
		fn()
	}()
	<-done
}

// In debug mode, a non-thread-safe call from another thread while the loop
// runs fails with LL_EWRONGTHREAD and changes nothing; thread-safe calls work.
func TestWrongThreadInDebugMode(t *testing.T) {
	loop := newRawLoop(t)
	expect(t, "ll_loop_set_debug", raw.SetDebug(loop, 1), 0)
	r, w := pipe(t)
	h := later(t, loop, 0.5, func() { t.Error("timer ran though cancelled") })
	otherRan := false
	tid := 0
	soon(t, loop, func() {
		tid = unix.Gettid()
		onOtherThread(func() {
			if unix.Gettid() == tid {
				t.Error("helper goroutine runs on the loop thread")
				return
			}
			out := newOut(t)
			out.Set(77)
			f, a := never(t, "wrong-thread ll_call_soon")
			expect(t, "ll_call_soon (wrong thread)", raw.CallSoon(loop, f, a, nil), cEWRONGTHREAD)
			f, a = never(t, "wrong-thread ll_call_soon with out")
			expect(t, "ll_call_soon out (wrong thread)", raw.CallSoon(loop, f, a, out.Ptr()), cEWRONGTHREAD)
			if out.Value() != 77 {
				t.Errorf("failed ll_call_soon wrote *out = %d", out.Value())
			}
			f, a = never(t, "wrong-thread ll_call_later")
			expect(t, "ll_call_later (wrong thread)", raw.CallLater(loop, 0, f, a, nil), cEWRONGTHREAD)
			f, a = never(t, "wrong-thread ll_call_at")
			expect(t, "ll_call_at (wrong thread)", raw.CallAt(loop, 0, f, a, nil), cEWRONGTHREAD)
			expect(t, "ll_add_reader (wrong thread)", raw.AddReader(loop, int32(r), ll.IOCallbackPtr(), 0), cEWRONGTHREAD)
			expect(t, "ll_add_writer (wrong thread)", raw.AddWriter(loop, int32(w), ll.IOCallbackPtr(), 0), cEWRONGTHREAD)
			expect(t, "ll_remove_reader (wrong thread)", raw.RemoveReader(loop, int32(r)), cEWRONGTHREAD)
			expect(t, "ll_loop_stop (wrong thread)", raw.Stop(loop), cEWRONGTHREAD)
			expect(t, "ll_loop_close (wrong thread)", raw.LoopClose(loop), cEWRONGTHREAD)
			expect(t, "ll_release (wrong thread)", raw.Release(loop), cEWRONGTHREAD)
			expect(t, "ll_loop_run_once (wrong thread)", raw.RunOnce(loop, cRunNowait), cEWRONGTHREAD)
			expect(t, "ll_handle_cancel (wrong thread)", raw.HandleCancel(h), cEWRONGTHREAD)
			// A timer handle's record is in C; its queries are still checked.
			expect(t, "ll_handle_cancelled (wrong thread)", raw.HandleCancelled(h), cEWRONGTHREAD)
			if when := raw.TimerWhen(h); when >= 0 {
				t.Errorf("ll_timer_when (wrong thread) = %v, want negative", when)
			}
			expect(t, "ll_loop_set_debug (wrong thread)", raw.SetDebug(loop, 0), cEWRONGTHREAD)
			// Thread-safe and read-only calls are allowed.
			expect(t, "ll_loop_is_running (other thread)", raw.IsRunning(loop), 1)
			expect(t, "ll_loop_wakeup (other thread)", raw.Wakeup(loop), 0)
			f, a = cb(func(uint64) { otherRan = true })
			expect(t, "ll_call_soon_threadsafe (other thread)", raw.CallSoonThreadsafe(loop, f, a), 0)
		})
		expect(t, "ll_loop_stop", raw.Stop(loop), 0)
	})
	runForever(t, loop, 5*time.Second)
	runNowait(t, loop)
	if !otherRan {
		t.Fatal("callback posted thread-safely from the other thread did not run")
	}
	expect(t, "ll_loop_get_debug", raw.GetDebug(loop), 1)
	expect(t, "ll_handle_cancelled", raw.HandleCancelled(h), 0)
	expect(t, "ll_handle_cancel", raw.HandleCancel(h), 0)
	unix.Write(w, []byte("x"))
	assertAlive(t, loop) // no reader was registered by the rejected call

	// While the loop is not running, any thread may call.
	n := 0
	onOtherThread(func() {
		f, a := cb(func(uint64) { n++ })
		expect(t, "ll_call_soon (other thread, loop idle)", raw.CallSoon(loop, f, a, nil), 0)
	})
	runNowait(t, loop)
	if n != 1 {
		t.Fatalf("callback scheduled from another thread while idle ran %d times", n)
	}
}

// Several loops run at once on their own threads, each driving a callback
// chain and timers while the others post to it.
func TestLoopsOnSeparateThreads(t *testing.T) {
	const nloops, chain, posts = 4, 2000, 20
	loops := make([]uint64, nloops)
	for i := range loops {
		loops[i] = newRawLoop(t)
	}
	// received[i] counts posts that loop i ran; only loop i's thread touches it.
	received := make([]int, nloops)
	var wg sync.WaitGroup
	for i, loop := range loops {
		wg.Add(1)
		go func() {
			defer wg.Done()
			runtime.LockOSThread()
			defer runtime.UnlockOSThread()
			n, timers := 0, 0
			var step func()
			step = func() {
				if n++; n < chain {
					soon(t, loop, step)
				}
				if n%(chain/posts) == 0 {
					later(t, loop, 0.001, func() { timers++ })
					dest := (i + 1) % nloops
					f, a := cb(func(uint64) { received[dest]++ })
					if rc := raw.CallSoonThreadsafe(loops[dest], f, a); rc != 0 {
						t.Errorf("ll_call_soon_threadsafe to another loop = %d", rc)
					}
				}
			}
			soon(t, loop, step)
			deadline := time.Now().Add(10 * time.Second)
			for (n < chain || timers < posts || received[i] < posts) && time.Now().Before(deadline) {
				// Block at most 100ms: a missed wakeup shows as a timeout, not a hang.
				h := later(t, loop, 0.1, func() {})
				if rc := raw.RunOnce(loop, cRunOnce); rc != 0 {
					t.Errorf("ll_loop_run_once = %d", rc)
					return
				}
				raw.HandleCancel(h)
				raw.Release(h)
			}
			if n != chain || timers != posts || received[i] != posts {
				t.Errorf("loop %d: chain %d/%d, timers %d/%d, posts received %d/%d",
					i, n, chain, timers, posts, received[i], posts)
			}
		}()
	}
	wg.Wait()
}

// Debug mode switched on while the loop runs: the loop thread's own calls
// still work and another thread's are refused.
func TestDebugEnabledWhileRunning(t *testing.T) {
	loop := newRawLoop(t)
	n := 0
	soon(t, loop, func() {
		expect(t, "ll_loop_set_debug (running)", raw.SetDebug(loop, 1), 0)
		later(t, loop, 0, func() { n++ })
		soonHandle(t, loop, func() { n++ })
		onOtherThread(func() {
			f, a := never(t, "wrong-thread ll_call_later")
			expect(t, "ll_call_later (wrong thread)", raw.CallLater(loop, 0, f, a, nil), cEWRONGTHREAD)
		})
		expect(t, "ll_loop_set_debug (running)", raw.SetDebug(loop, 0), 0)
		later(t, loop, 0, func() { n++ })
	})
	runNowait(t, loop)
	runNowait(t, loop)
	if n != 3 {
		t.Fatalf("%d of 3 callbacks scheduled from the loop thread ran", n)
	}
}

// Closing and releasing a loop while other threads post to it and wake it:
// each call either succeeds or fails with LL_ECLOSED / LL_EBADHANDLE, and
// nothing crashes.
func TestReleaseWhileOtherThreadsPost(t *testing.T) {
	for round := 0; round < 20; round++ {
		loop := newRawLoop(t)
		stop := make(chan struct{})
		var wg sync.WaitGroup
		for g := 0; g < 4; g++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for i := 0; ; i++ {
					select {
					case <-stop:
						return
					default:
					}
					var rc int32
					if i%2 == 0 {
						f, a := cb(func(uint64) {})
						rc = raw.CallSoonThreadsafe(loop, f, a)
						if rc != 0 {
							ll.Unregister(a)
						}
					} else {
						rc = raw.Wakeup(loop)
					}
					if rc != 0 && rc != cECLOSED && rc != cEBADHANDLE {
						t.Errorf("post/wakeup racing with release = %d", rc)
						return
					}
				}
			}()
		}
		runNowait(t, loop)
		time.Sleep(time.Millisecond)
		if round%2 == 0 {
			expect(t, "ll_loop_close", raw.LoopClose(loop), 0)
		}
		expect(t, "ll_release", raw.Release(loop), 0)
		close(stop)
		wg.Wait()
	}
	assertAlive(t, newRawLoop(t))
}
