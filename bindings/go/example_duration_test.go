// SPDX-License-Identifier: MIT

package libloop_test

import (
	"fmt"
	"time"

	libloop "github.com/libloop/libloop/bindings/go"
)

// A repeating timer with time.Duration intervals: the Duration forms of
// the calls first published with float seconds (StartTimer, SetRepeat,
// When) carry a Duration suffix.
func ExampleLoop_StartTimerDuration() {
	loop, err := libloop.NewLoop()
	if err != nil {
		fmt.Println(err)
		return
	}
	defer loop.Release()
	start := loop.Now()
	ticks := 0
	var timer *libloop.Timer
	timer, err = loop.StartTimerDuration(5*time.Millisecond, 2*time.Millisecond, func() {
		ticks++
		if ticks == 3 {
			timer.Stop()
			loop.Stop()
		}
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer timer.Release()
	when, _ := timer.WhenDuration()
	fmt.Println("first run at least 5ms away:", when-start >= 5*time.Millisecond)
	loop.RunForever()
	fmt.Println("ticks:", ticks, "after at least 9ms:", loop.Now()-start >= 9*time.Millisecond)
	// Output:
	// first run at least 5ms away: true
	// ticks: 3 after at least 9ms: true
}
