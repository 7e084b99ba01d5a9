// SPDX-License-Identifier: MIT

package libloop_test

import (
	"context"
	"errors"
	"fmt"
	"time"

	libloop "github.com/libloop/libloop/bindings/go"
)

// WaitForContext is asyncio.wait_for with a context instead of a timeout:
// the context's deadline times the wait out (ETIMEDOUT, matching
// context.DeadlineExceeded) and cancels what was awaited.
func ExampleLoop_WaitForContext() {
	loop, err := libloop.NewLoop()
	if err != nil {
		fmt.Println(err)
		return
	}
	defer loop.Release()
	never, _ := loop.NewFuture() // nobody sets it
	defer never.Release()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Millisecond)
	defer cancel()
	bounded, _ := loop.WaitForContext(ctx, never)
	defer bounded.Release()
	loop.RunUntilComplete(bounded)
	_, err = bounded.Result()
	state, _ := never.State()
	fmt.Println(errors.Is(err, context.DeadlineExceeded), state)
	// Output:
	// true cancelled
}
