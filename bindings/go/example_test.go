// SPDX-License-Identifier: MIT

package libloop_test

import (
	"fmt"
	"time"

	libloop "github.com/libloop/libloop/bindings/go"
)

func Example() {
	loop, err := libloop.NewLoop()
	if err != nil {
		fmt.Println(err)
		return
	}
	defer loop.Release()
	loop.CallLater(10*time.Millisecond, func() {
		fmt.Println("timer")
		loop.Stop()
	})
	loop.CallSoon(func() { fmt.Println("soon") })
	posted := make(chan struct{})
	go func() {
		loop.CallSoonThreadsafe(func() { fmt.Println("from another goroutine") })
		close(posted)
	}()
	<-posted
	if err := loop.RunForever(); err != nil {
		fmt.Println(err)
	}
	// Output:
	// soon
	// from another goroutine
	// timer
}

func ExampleError() {
	loop, err := libloop.NewLoop()
	if err != nil {
		fmt.Println(err)
		return
	}
	loop.Close()
	_, err = loop.CallSoon(func() {})
	fmt.Println(err == libloop.ECLOSED, err)
	loop.Release()
	// Output: true LL_ECLOSED: event loop is closed
}

// A task written as a step function: asyncio's "Hello ... World".
func ExampleLoop_NewTask() {
	loop, err := libloop.NewLoop()
	if err != nil {
		fmt.Println(err)
		return
	}
	defer loop.Release()
	task, _ := loop.NewTask(func(t *libloop.Task) {
		if woken, _ := t.Awaited(); woken == nil { // first step
			fmt.Println("Hello")
			sleep, _ := loop.Sleep(time.Millisecond)
			t.Await(sleep)
			sleep.Release() // the task keeps it until it wakes
			return
		}
		fmt.Println("World")
		t.Return(42, nil)
	})
	defer task.Release()
	if err := loop.RunUntilComplete(&task.Future); err != nil {
		fmt.Println(err)
	}
	fmt.Println(task.Result())
	// Output:
	// Hello
	// World
	// 42 <nil>
}
