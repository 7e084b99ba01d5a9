// SPDX-License-Identifier: MIT

package libloop_test

import (
	"context"
	"fmt"

	"github.com/libloop/libloop/libloop"
)

// A child process with its stdout as a pipe transport; its exit is an
// event and OnExit's callback.
func ExampleLoop_Spawn() {
	loop, _ := libloop.New()
	defer loop.Close()
	var out []byte
	code, pending := 0, 2 // the exit and the end of stdout, in either order
	done, _ := libloop.NewTypedFuture[int](loop)
	defer done.Release()
	finish := func() {
		if pending--; pending == 0 {
			done.SetResult(code)
		}
	}
	proc, err := loop.Spawn(&libloop.ProcessOptions{
		File:  "sh",
		Argv:  []string{"sh", "-c", "echo hello from $0; exit 3"},
		Stdio: [3]int{libloop.StdioDevNull, libloop.StdioPipe, libloop.StdioInherit},
	}, func(ev *libloop.Event) bool {
		switch ev.Kind {
		case libloop.DataReceived:
			out = append(out, ev.Data...)
		case libloop.ConnectionLost:
			finish()
		}
		return false
	})
	if err != nil {
		panic(err)
	}
	proc.OnExit(func(rc int) { code = rc; finish() })
	rc, err := libloop.Run(context.Background(), done)
	fmt.Printf("%q exit %d %v\n", out, rc, err)
	// Output:
	// "hello from sh\n" exit 3 <nil>
}
