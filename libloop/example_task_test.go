// SPDX-License-Identifier: MIT

package libloop_test

import (
	"context"
	"fmt"
	"time"

	"github.com/libloop/libloop/libloop"
)

// A task is a coroutine written as a step function: each step ends with
// Await, Yield, Sleep, Return or Raise. A typed task returns a Go value.
func ExampleNewTypedTask() {
	loop, _ := libloop.New()
	defer loop.Close()
	child, _ := libloop.NewTypedFuture[int](loop)
	defer child.Release()
	loop.CallLaterDuration(time.Millisecond, func() { child.SetResult(20) })

	step := 0
	task, _ := libloop.NewTypedTask(loop, func(t *libloop.TypedTask[int]) {
		step++
		switch step {
		case 1:
			t.SleepDuration(time.Millisecond) // await asyncio.sleep(0.001)
		case 2:
			t.Await(child.Future()) // await child
		case 3:
			v, _ := child.Result()
			t.Return(v + 22)
		}
	})
	defer task.Release()
	v, err := libloop.Run(context.Background(), task.Typed())
	fmt.Println(v, err, "after", step, "steps")
	// Output:
	// 42 <nil> after 3 steps
}
