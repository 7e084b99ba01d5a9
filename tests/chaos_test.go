// SPDX-License-Identifier: MIT

package tests

import (
	"math"
	"math/rand"
	"os"
	"runtime"
	"strconv"
	"testing"
	"time"

	ll "github.com/libloop/libloop/bindings/go"
)

// knownCode reports whether rc is a value the header allows a call to
// return: success (>= 0), -errno, or one of the LL_E* codes.
func knownCode(rc int32) bool {
	return rc >= 0 || (rc > -4096) || (rc <= cEINVAL && rc >= cENOMEM)
}

// TestChaosNeverCrashes throws thousands of random calls at the C ABI —
// live, released, forged and wrong-kind ids, hostile delays and fds, calls
// out of place (task calls outside a step, runs of other loops) — and
// checks that each returns a documented code and that the loop still runs
// a callback afterwards. The header promises "an error, never a crash".
func TestChaosNeverCrashes(t *testing.T) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	seeds := []int64{1, 2, 3, 42, 1234}
	// LIBLOOP_CHAOS_SEEDS=N adds N time-based seeds, for a longer soak by hand.
	if n, _ := strconv.Atoi(os.Getenv("LIBLOOP_CHAOS_SEEDS")); n > 0 {
		base := time.Now().UnixNano()
		for i := 0; i < n; i++ {
			seeds = append(seeds, base+int64(i))
		}
	}
	for _, seed := range seeds {
		chaos(t, seed, 20000)
	}
}

func chaos(t *testing.T, seed int64, steps int) {
	r := rand.New(rand.NewSource(seed))
	loop := newRawLoop(t)
	other := newRawLoop(t)
	out := newOut(t)
	ran := 0
	// Callbacks also make random calls, so the calls run inside a batch too
	// (where ll_call_soon and yields take their C-side fast paths).
	var doOp func()
	depth := 0
	key := ll.RegisterCallback(func(uint64) {
		ran++
		if depth < 2 && r.Intn(3) == 0 {
			depth++
			for k := 0; k < 3; k++ {
				doOp()
			}
			depth--
		}
	}, false) // never freed mid-run
	defer ll.Unregister(key)
	ioKey := ll.RegisterIOCallback(func(uint64, int) { ran++ }, false)
	defer ll.Unregister(ioKey)
	fn := ll.CallbackPtr()
	rd, wr, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer rd.Close()
	defer wr.Close()

	ids := []uint64{0, loop, other, 1, 1 << 32, math.MaxUint64, loop + 1<<32}
	pick := func() uint64 { return ids[r.Intn(len(ids))] }
	delays := []float64{0, -1, 1e-6, 0.001, 3600, math.NaN(), math.Inf(1), math.Inf(-1), 1e300}
	fds := []int32{-1, 0, int32(rd.Fd()), int32(wr.Fd()), 1 << 20, 99999}
	keep := func(rc int32) {
		if rc == 0 && out.Value() != 0 {
			ids = append(ids, out.Value())
			out.Set(0)
		}
	}
	check := func(what string, rc int32) {
		if !knownCode(rc) {
			t.Fatalf("seed %d: %s returned %d, not a documented code", seed, what, rc)
		}
	}
	i := 0
	doOp = func() {
		if i%97 == 0 {
			wr.Write([]byte{1}) // give readers of the pipe something to see
		}
		switch r.Intn(20) {
		case 0:
			rc := raw.CallSoon(pick(), fn, key, out.Ptr())
			check("ll_call_soon", rc)
			keep(rc)
		case 1:
			rc := raw.CallLater(pick(), delays[r.Intn(len(delays))], fn, key, out.Ptr())
			check("ll_call_later", rc)
			keep(rc)
		case 2:
			check("ll_handle_cancel", raw.HandleCancel(pick()))
		case 3:
			id := pick()
			if id != loop && id != other { // keep the two loops for the end
				check("ll_release", raw.Release(id))
			}
		case 4:
			rc := raw.FutureNew(pick(), out.Ptr())
			check("ll_future_new", rc)
			keep(rc)
		case 5:
			check("ll_future_set_result", raw.FutureSetResult(pick(), uintptr(r.Intn(9)), 0))
		case 6:
			check("ll_future_cancel", raw.FutureCancel(pick(), nil))
		case 7:
			check("ll_future_result", raw.FutureResult(pick(), out.Ptr()))
			out.Set(0)
		case 8:
			check("ll_future_add_done_callback", raw.FutureAddDoneCallback(pick(), fn, key))
		case 9:
			rc := raw.Sleep(pick(), delays[r.Intn(len(delays))], out.Ptr())
			check("ll_sleep", rc)
			keep(rc)
		case 10:
			children := []uint64{pick(), pick(), pick()}
			buf, err := ll.NewCIDs(children)
			if err != nil {
				t.Fatal(err)
			}
			rc := raw.Gather(pick(), uintptr(len(children)), buf.Ptr(), int32(r.Intn(2)), out.Ptr())
			buf.Free()
			check("ll_gather", rc)
			keep(rc)
		case 11:
			rc := raw.WaitFor(pick(), pick(), delays[r.Intn(len(delays))], out.Ptr())
			check("ll_wait_for", rc)
			keep(rc)
		case 12:
			check("ll_task_await", raw.TaskAwait(pick(), pick()))
			check("ll_task_sleep", raw.TaskSleep(pick(), delays[r.Intn(len(delays))]))
		case 13:
			check("ll_add_reader", raw.AddReader(pick(), fds[r.Intn(len(fds))], ll.IOCallbackPtr(), ioKey))
		case 14:
			check("ll_remove_reader", raw.RemoveReader(pick(), fds[r.Intn(len(fds))]))
		case 15:
			check("ll_loop_stop", raw.Stop(pick()))
		case 16:
			check("ll_loop_run_once", raw.RunOnce(pick(), cRunNowait))
		case 17:
			check("ll_loop_run_once(loop)", raw.RunOnce(loop, cRunNowait))
		case 18:
			rc := raw.LoopNew(out.Ptr())
			check("ll_loop_new", rc)
			keep(rc)
		case 19:
			if id := pick(); id != loop && id != other {
				check("ll_loop_close", raw.LoopClose(id))
			}
		}
	}
	for ; i < steps; i++ {
		doOp()
	}
	// Readers on the test's pipe fds go before the deferred closes, and the
	// loops the chaos made are released.
	for _, id := range ids {
		raw.RemoveReader(id, int32(rd.Fd()))
		raw.RemoveReader(id, int32(wr.Fd()))
		if id != loop && id != other {
			raw.Release(id)
		}
	}
	assertAlive(t, loop)
	assertAlive(t, other)
	if ran == 0 {
		t.Errorf("seed %d: no callback ran in %d steps", seed, steps)
	}
}
