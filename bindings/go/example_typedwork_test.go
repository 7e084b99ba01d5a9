// SPDX-License-Identifier: MIT

package libloop_test

import (
	"context"
	"fmt"
	"strings"

	libloop "github.com/libloop/libloop/bindings/go"
)

// Go runs blocking work on the library's executor (run_in_executor) and
// returns a typed future set on the loop thread; the func's context is
// cancelled if the future is, or if Go's context ends.
func ExampleGo() {
	loop, err := libloop.NewLoop()
	if err != nil {
		fmt.Println(err)
		return
	}
	defer loop.Release()
	ctx := context.Background()
	upper, _ := libloop.Go(ctx, loop, func(ctx context.Context) (string, error) {
		return strings.ToUpper("blocking work, off the loop thread"), nil
	})
	defer upper.Release()
	loop.RunUntilCompleteContext(ctx, upper.Future())
	fmt.Println(upper.Result())
	// Output:
	// BLOCKING WORK, OFF THE LOOP THREAD <nil>
}
