// SPDX-License-Identifier: MIT

package libloop_test

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/libloop/libloop/libloop"
)

// A typed future carries a Go value (or a Go error) instead of the C ABI's
// uintptr; Run runs the loop on this goroutine until it is done.
func ExampleTypedFuture() {
	loop, _ := libloop.New()
	defer loop.Close()
	answer, _ := libloop.NewTypedFuture[[]string](loop)
	defer answer.Release()
	loop.CallLaterDuration(time.Millisecond, func() { answer.SetResult([]string{"a", "b"}) })
	v, err := libloop.Run(context.Background(), answer)
	fmt.Println(v, err)

	notFound := errors.New("not found")
	failed, _ := libloop.NewTypedFuture[int](loop)
	defer failed.Release()
	failed.SetError(notFound)
	_, err = libloop.Run(context.Background(), failed)
	fmt.Println(errors.Is(err, notFound))
	// Output:
	// [a b] <nil>
	// true
}

// Await waits for a future from another goroutine while the loop runs on
// its own; a context bounds the wait and cancels the future if it ends
// first.
func ExampleAwait() {
	loop, _ := libloop.New()
	stopped := make(chan struct{})
	go func() { loop.RunForever(); close(stopped) }()

	futures := make(chan *libloop.TypedFuture[string])
	loop.CallSoonThreadsafe(func() { // futures are made on the loop thread
		f, _ := libloop.NewTypedFuture[string](loop)
		loop.CallLaterDuration(5*time.Millisecond, func() { f.SetResult("done on the loop") })
		futures <- f
	})
	f := <-futures
	v, err := libloop.Await(context.Background(), f)
	fmt.Println(v, err)

	loop.CallSoonThreadsafe(func() {
		f.Release()
		never, _ := libloop.NewTypedFuture[string](loop)
		futures <- never
	})
	never := <-futures
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Millisecond)
	defer cancel()
	_, err = libloop.Await(ctx, never)
	fmt.Println(err)

	loop.CallSoonThreadsafe(func() { never.Release(); loop.Stop() })
	<-stopped
	loop.Close()
	// Output:
	// done on the loop <nil>
	// context deadline exceeded
}
