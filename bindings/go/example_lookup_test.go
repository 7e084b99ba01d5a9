// SPDX-License-Identifier: MIT

package libloop_test

import (
	"context"
	"fmt"
	"time"

	libloop "github.com/libloop/libloop/bindings/go"
)

// LookupHost resolves a name on the library's resolver pool, never on the
// loop thread, into a typed future of netip.Addr; a context bounds it.
func ExampleLoop_LookupHost() {
	loop, err := libloop.NewLoop()
	if err != nil {
		fmt.Println(err)
		return
	}
	defer loop.Release()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	addrs, _ := loop.LookupHost(ctx, "localhost")
	defer addrs.Release()
	loop.RunUntilCompleteContext(ctx, addrs.Future())
	fmt.Println(addrs.Result())
	// Output:
	// [127.0.0.1 ::1] <nil>
}
