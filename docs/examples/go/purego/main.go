// SPDX-License-Identifier: MIT

// Command purego drives libloop.so through the purego binding (no cgo):
// the same loop a C or Python program in this process could share.
// Run it with LIBLOOP_LIBRARY=build/libloop.so (or from the repository,
// where build/libloop.so is found).
package main

import (
	"fmt"
	"os"
	"time"

	libloop "github.com/libloop/libloop/bindings/go"
)

func main() {
	loop, err := libloop.NewLoop()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	defer loop.Release()
	var got []string
	loop.CallSoon(func() { got = append(got, "soon") })
	loop.CallLater(10*time.Millisecond, func() {
		got = append(got, "later")
		loop.Stop()
	})
	posted := make(chan struct{})
	go func() { // any goroutine may post
		loop.CallSoonThreadsafe(func() { got = append(got, "threadsafe") })
		close(posted)
	}()
	<-posted
	if err := loop.RunForever(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	st, err := loop.Stats()
	if err != nil || len(got) != 3 || got[2] != "later" || st.Callbacks < 3 {
		fmt.Fprintf(os.Stderr, "unexpected: %v %v %+v\n", got, err, st)
		os.Exit(1)
	}
	fmt.Printf("purego: ran %v; %d iterations\n", got, st.Iterations)
}
