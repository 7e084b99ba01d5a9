// SPDX-License-Identifier: MIT

package libloop

import (
	"os"
	"os/signal"
	"syscall"
	"testing"
	"time"
)

// Each delivery of a forwarded signal runs its handler once on the loop
// thread; after stop, deliveries no longer reach the loop and the
// forwarding goroutine is gone.
func TestForwardSignals(t *testing.T) {
	// os/signal's first Notify starts its own process-wide goroutine,
	// which stays: start it before counting.
	prime := make(chan os.Signal, 1)
	signal.Notify(prime, syscall.SIGUSR2)
	signal.Stop(prime)
	checkNoGoroutineLeak(t)
	l := newTestLoop(t)
	if _, err := l.ForwardSignals(); err != EINVAL {
		t.Fatalf("no signals: %v, want EINVAL", err)
	}
	if _, err := l.ForwardSignals(os.Interrupt, fakeSignal{}); err != EINVAL {
		t.Fatalf("a non-syscall signal: %v, want EINVAL", err)
	}
	got := 0
	l.AddSignalHandler(int(syscall.SIGUSR2), func() {
		got++
		if got == 2 {
			l.Stop()
		}
	}, HostCall{})
	stop, err := l.ForwardSignals(syscall.SIGUSR2)
	if err != nil {
		t.Fatal(err)
	}
	syscall.Kill(os.Getpid(), syscall.SIGUSR2)
	l.CallLaterDuration(50*time.Millisecond, func() { syscall.Kill(os.Getpid(), syscall.SIGUSR2) })
	guard, _ := l.CallLaterDuration(10*time.Second, func() { l.Stop() })
	l.RunForever()
	guard.Cancel()
	if got != 2 {
		t.Fatalf("handler ran %d times for 2 deliveries", got)
	}
	stop()
	stop() // a second stop does nothing
}

type fakeSignal struct{}

func (fakeSignal) String() string { return "fake" }
func (fakeSignal) Signal()        {}
