// SPDX-License-Identifier: MIT

package libloop_test

import (
	"fmt"
	"os"
	"syscall"

	"github.com/libloop/libloop/libloop"
)

// A Go program forwards the process's signals to the loop; the handler
// runs on the loop thread (add_signal_handler).
func ExampleLoop_ForwardSignals() {
	loop, _ := libloop.New()
	defer loop.Close()
	loop.AddSignalHandler(int(syscall.SIGUSR1), func() {
		fmt.Println("SIGUSR1 on the loop thread")
		loop.Stop()
	}, libloop.HostCall{})
	stop, err := loop.ForwardSignals(syscall.SIGUSR1)
	if err != nil {
		panic(err)
	}
	defer stop()
	syscall.Kill(os.Getpid(), syscall.SIGUSR1)
	loop.RunForever()
	// Output:
	// SIGUSR1 on the loop thread
}
