// SPDX-License-Identifier: MIT

package libloop_test

import (
	"context"
	"fmt"
	"time"

	"github.com/libloop/libloop/libloop"
)

// LookupHost resolves a name on the loop's resolver pool, never on the
// loop thread; a context bounds the lookup.
func ExampleLoop_LookupHost() {
	loop, _ := libloop.New()
	defer loop.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	addrs, _ := loop.LookupHost(ctx, "localhost")
	defer addrs.Release()
	ips, err := libloop.Run(ctx, addrs)
	fmt.Println(ips, err)
	// Output:
	// [127.0.0.1 ::1] <nil>
}
