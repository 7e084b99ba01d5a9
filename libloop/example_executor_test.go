// SPDX-License-Identifier: MIT

package libloop_test

import (
	"context"
	"fmt"
	"strings"

	"github.com/libloop/libloop/libloop"
)

// Go runs blocking work on the loop's executor (run_in_executor) and
// returns a typed future resolved on the loop thread; the func's context
// is cancelled if the future is.
func ExampleGo() {
	loop, _ := libloop.New()
	defer loop.Close()
	upper, _ := libloop.Go(context.Background(), loop, func(ctx context.Context) (string, error) {
		return strings.ToUpper("blocking work, off the loop thread"), nil
	})
	defer upper.Release()
	v, err := libloop.Run(context.Background(), upper)
	fmt.Println(v, err)
	// Output:
	// BLOCKING WORK, OFF THE LOOP THREAD <nil>
}
