// SPDX-License-Identifier: MIT

// Command core runs a loop of the pure-Go core package, imported directly:
// no shared library, no cgo, one Go runtime. A task sleeps twice and
// returns; a timer and the metrics show the loop's work.
package main

import (
	"fmt"
	"os"

	"github.com/libloop/libloop/libloop"
)

func main() {
	l, err := libloop.New()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	defer l.Close()

	steps := 0
	task, _ := l.NewTask(func(t *libloop.Task) {
		steps++
		if steps == 3 {
			t.Return(42, nil) // return 42
			return
		}
		f, _ := l.Sleep(0.01) // await asyncio.sleep(0.01)
		t.Await(f)
		f.Release()
	})
	fired := false
	l.CallLater(0.005, func() { fired = true })
	if err := l.RunUntilComplete(&task.Future); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	v, err := task.Result()
	st := l.Stats()
	if err != nil || v != 42 || !fired || steps != 3 || st.Tasks != 0 || st.Idle <= 0 {
		fmt.Fprintf(os.Stderr, "unexpected: v=%d err=%v fired=%v steps=%d stats=%+v\n", v, err, fired, steps, st)
		os.Exit(1)
	}
	fmt.Printf("core: task returned %d after %d steps; %d callbacks, utilization %.2f\n",
		v, steps, st.Callbacks, st.Utilization(libloop.Stats{}))
}
