// SPDX-License-Identifier: MIT

package libloop_test

import (
	"context"
	"fmt"
	"time"

	"github.com/libloop/libloop/libloop"
)

// A loop runs callbacks in the order they were scheduled (call_soon) and
// timers at or after their deadline (call_later), until Stop.
func ExampleLoop_RunForever() {
	loop, err := libloop.New()
	if err != nil {
		panic(err)
	}
	defer loop.Close()
	loop.CallLaterDuration(20*time.Millisecond, func() {
		fmt.Println("timer: 20ms")
		loop.Stop()
	})
	loop.CallLaterDuration(10*time.Millisecond, func() { fmt.Println("timer: 10ms") })
	loop.CallSoon(func() { fmt.Println("soon: 1") })
	loop.CallSoon(func() { fmt.Println("soon: 2") })
	if err := loop.RunForever(); err != nil {
		panic(err)
	}
	// Output:
	// soon: 1
	// soon: 2
	// timer: 10ms
	// timer: 20ms
}

// A repeating timer with time.Duration intervals.
func ExampleLoop_StartTimerDuration() {
	loop, _ := libloop.New()
	defer loop.Close()
	ticks := 0
	var timer *libloop.Timer
	timer, _ = loop.StartTimerDuration(time.Millisecond, 2*time.Millisecond, func() {
		ticks++
		fmt.Println("tick", ticks)
		if ticks == 3 {
			timer.Stop()
			loop.Stop()
		}
	})
	loop.RunForever()
	// Output:
	// tick 1
	// tick 2
	// tick 3
}

// A context bounds a run: when its deadline passes, the future (here a
// one-hour sleep) is cancelled and the run returns the context's error.
func ExampleLoop_RunUntilCompleteContext() {
	loop, _ := libloop.New()
	defer loop.Close()
	sleep, _ := loop.SleepDuration(time.Hour)
	defer sleep.Release()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Millisecond)
	defer cancel()
	err := loop.RunUntilCompleteContext(ctx, sleep)
	fmt.Println(err, sleep.State() == libloop.Cancelled)
	// Output:
	// context deadline exceeded true
}
