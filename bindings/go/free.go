// SPDX-License-Identifier: MIT

package libloop

import (
	"fmt"
	"os"
	"sync"

	"github.com/ebitengine/purego"
)

// Free functions. ll_free_fn is called with the value alone, no void *arg,
// so a fixed trampoline cannot be routed by a key as other callbacks are.
// The binding routes it by the value instead: when a Go free func is given
// with a value (Future.SetResult, Task.Return, ...), the binding passes its
// own trampoline (FreePtr) to the library and records value -> func. When
// the library frees the value, the trampoline takes the oldest func recorded
// for that value and calls it, once.
//
// So each registration is called exactly once. Two registrations of the same
// value (two futures given the same word, each with a Go free func) are
// called in registration order, whichever future is disposed first: give
// values with different owners different words (a C pointer, a table key).
// A C host's free function (a C address) needs no routing: pass it through
// the raw layer.

type freeReg struct{ fn func(uintptr) }

var frees = struct {
	mu sync.Mutex
	m  map[uintptr][]*freeReg
	n  int
}{m: make(map[uintptr][]*freeReg)}

var freeTramp struct {
	once sync.Once
	p    uintptr
}

// FreePtr returns the C address of the binding's ll_free_fn trampoline,
// which calls the func RegisterFree recorded for the value it is given.
func FreePtr() uintptr {
	freeTramp.once.Do(func() { freeTramp.p = purego.NewCallback(freeTrampoline) })
	return freeTramp.p
}

// RegisterFree records fn as the free func of value for the FreePtr
// trampoline (see the routing rule above) and returns a func that forgets it
// again if the library never took it (the call that was given it failed);
// that func reports whether the registration was still there.
func RegisterFree(value uintptr, fn func(value uintptr)) (forget func() bool) {
	r := addFree(value, fn)
	return func() bool { return dropFree(value, r) }
}

// LiveFrees returns how many Go free funcs wait for their value to be freed.
func LiveFrees() int {
	frees.mu.Lock()
	defer frees.mu.Unlock()
	return frees.n
}

func addFree(value uintptr, fn func(uintptr)) *freeReg {
	r := &freeReg{fn: fn}
	frees.mu.Lock()
	frees.m[value] = append(frees.m[value], r)
	frees.n++
	frees.mu.Unlock()
	return r
}

// dropFree forgets r (a call that was given it failed, or the value's
// ownership passed back to the host).
func dropFree(value uintptr, r *freeReg) bool {
	frees.mu.Lock()
	defer frees.mu.Unlock()
	list := frees.m[value]
	for i, x := range list {
		if x == r {
			list = append(list[:i:i], list[i+1:]...)
			if len(list) == 0 {
				delete(frees.m, value)
			} else {
				frees.m[value] = list
			}
			frees.n--
			return true
		}
	}
	return false
}

// freeArg returns the ll_free_fn to pass for fn (0 for nil) and the
// registration to drop if the call fails.
func freeArg(value uintptr, fn func(uintptr)) (uintptr, *freeReg) {
	if fn == nil {
		return 0, nil
	}
	return FreePtr(), addFree(value, fn)
}

// undoFree drops r after a failed call (r may be nil).
func undoFree(value uintptr, r *freeReg) {
	if r != nil {
		dropFree(value, r)
	}
}

func freeTrampoline(value uintptr) {
	frees.mu.Lock()
	list := frees.m[value]
	if len(list) == 0 {
		frees.mu.Unlock()
		return
	}
	r := list[0]
	if len(list) == 1 {
		delete(frees.m, value)
	} else {
		frees.m[value] = list[1:]
	}
	frees.n--
	frees.mu.Unlock()
	defer func() {
		if p := recover(); p != nil {
			fmt.Fprintf(os.Stderr, "libloop: panic in free func for %#x: %v\n", value, p)
		}
	}()
	r.fn(value)
}
