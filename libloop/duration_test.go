// SPDX-License-Identifier: MIT

package libloop

import (
	"testing"
	"time"
)

// The Duration forms never fire early and refuse what the float forms
// refuse.
func TestDurationForms(t *testing.T) {
	l := newTestLoop(t)
	start := l.Now()
	var fired time.Duration
	l.CallLaterDuration(15*time.Millisecond, func() { fired = l.Now() - start })
	sleep, _ := l.SleepDuration(20 * time.Millisecond)
	defer sleep.Release()
	l.RunUntilComplete(sleep)
	if fired < 15*time.Millisecond {
		t.Fatalf("CallLaterDuration(15ms) fired after %v", fired)
	}
	if d := l.Now() - start; d < 20*time.Millisecond {
		t.Fatalf("SleepDuration(20ms) done after %v", d)
	}
	if _, err := l.CallLaterDuration(200*365*24*time.Hour, func() {}); err != EINVAL {
		t.Fatalf("a 200-year delay: %v, want EINVAL", err)
	}
	ticks := 0
	tm, _ := l.StartTimerDuration(time.Millisecond, time.Millisecond, func() {
		if ticks++; ticks == 3 {
			l.Stop()
		}
	})
	l.RunForever()
	tm.Stop()
	if ticks != 3 {
		t.Fatalf("%d ticks", ticks)
	}
	f, _ := l.NewFuture()
	defer f.Release()
	w, _ := l.WaitForDuration(f, time.Millisecond)
	defer w.Release()
	l.RunUntilComplete(w)
	if _, err := w.Result(); err != ETIMEDOUT {
		t.Fatalf("WaitForDuration: %v, want ETIMEDOUT", err)
	}
}
