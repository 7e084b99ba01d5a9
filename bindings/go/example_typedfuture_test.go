// SPDX-License-Identifier: MIT

package libloop_test

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"time"

	libloop "github.com/libloop/libloop/bindings/go"
)

// A typed future carries a Go value (here a struct) or a Go error instead
// of a uintptr; the value stays on the Go side of the library.
func ExampleTypedFuture() {
	loop, err := libloop.NewLoop()
	if err != nil {
		fmt.Println(err)
		return
	}
	defer loop.Release()
	type point struct{ X, Y int }
	pt, _ := libloop.NewTypedFuture[point](loop)
	defer pt.Release()
	loop.CallSoon(func() { pt.SetResult(point{3, 4}) })
	loop.RunUntilComplete(pt.Future())
	fmt.Println(pt.Result())

	missing, _ := libloop.NewTypedFuture[[]byte](loop)
	defer missing.Release()
	loop.CallSoon(func() { missing.SetError(fmt.Errorf("config: %w", fs.ErrNotExist)) })
	loop.RunUntilComplete(missing.Future())
	_, err = missing.Result()
	fmt.Println(err, errors.Is(err, fs.ErrNotExist))
	// Output:
	// {3 4} <nil>
	// config: file does not exist true
}

// Waiting for a typed future from another goroutine while the loop runs;
// a context that ends first cancels the future.
func ExampleAwait() {
	loop, err := libloop.NewLoop()
	if err != nil {
		fmt.Println(err)
		return
	}
	defer loop.Release()
	answer, _ := libloop.NewTypedFuture[string](loop) // before the loop runs: its thread's calls
	never, _ := libloop.NewTypedFuture[int](loop)
	ran := make(chan struct{})
	go func() { loop.RunForever(); close(ran) }()

	loop.CallSoonThreadsafe(func() {
		loop.CallLater(time.Millisecond, func() { answer.SetResult("forty-two") })
	})
	fmt.Println(libloop.Await(context.Background(), answer))

	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Millisecond)
	defer cancel()
	_, err = never.Wait(ctx)
	fmt.Println(err)

	loop.CallSoonThreadsafe(func() { loop.Stop() })
	<-ran
	fmt.Println(never.Result()) // the loop is ours again
	answer.Release()
	never.Release()
	// Output:
	// forty-two <nil>
	// context deadline exceeded
	// 0 LL_ECANCELLED: cancelled
}

// A task written as a step function whose outcome is typed.
func ExampleNewTypedTask() {
	loop, err := libloop.NewLoop()
	if err != nil {
		fmt.Println(err)
		return
	}
	defer loop.Release()
	steps := 0
	task, _ := libloop.NewTypedTask(loop, func(t *libloop.TypedTask[[]string]) {
		steps++
		if steps < 3 {
			t.Sleep(time.Millisecond)
			return
		}
		t.Return([]string{"slept", "twice"})
	})
	defer task.Release()
	loop.RunUntilComplete(&task.Future)
	fmt.Println(task.Result())
	// Output: [slept twice] <nil>
}

// asyncio.run for a typed task: a loop of its own, the value handed back.
func ExampleRunTyped() {
	n := 0
	total, err := libloop.RunTyped(func(t *libloop.TypedTask[int]) {
		if n++; n < 4 {
			t.Yield()
			return
		}
		t.Return(10 * n)
	})
	fmt.Println(total, err)
	// Output: 40 <nil>
}
