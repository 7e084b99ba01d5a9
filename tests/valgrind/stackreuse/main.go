// SPDX-License-Identifier: MIT

//go:build stackreuse

// Command stackreuse shows, under valgrind's memcheck, why Go code needs
// the runtime's valgrind annotations (docs/FAULTS.md, "make test-valgrind").
// Goroutines recurse (their stacks grow by copying) and exit; two GCs give
// their stack memory back to the heap; then each new object is asked about
// (VALGRIND_GET_VBITS says whether every byte is addressable) before
// ordinary Go code writes it. Without -tags valgrind, memcheck still marks
// the popped frames of those dead stacks unaddressable, so new objects there
// read as "invalid"; with it, none does. Run it from the repository root:
//
//	go build -tags stackreuse -o build/stackreuse ./tests/valgrind/stackreuse
//	valgrind -q --leak-check=no build/stackreuse            # exit 0: reports only
//	go build -tags stackreuse,valgrind -o build/stackreuse ./tests/valgrind/stackreuse
//	valgrind -q --leak-check=no build/stackreuse            # exit 1 if any object is unaddressable
package main

/*
#include <valgrind/memcheck.h>
// probe: 3 if some byte of [p, p+n) is unaddressable to memcheck, 1 if
// all are, 0 when not running under valgrind. n <= 4096.
static int probe(void *p, unsigned long n) {
	static unsigned char vbits[4096];
	return VALGRIND_GET_VBITS(p, vbits, n);
}
static int on_valgrind(void) { return RUNNING_ON_VALGRIND; }
*/
import "C"

import (
	"fmt"
	"os"
	"runtime"
	"sync"
	"unsafe"
)

const frame = 512

// deep recurses n frames of frame bytes each; it records the deepest
// frame's address, which is on the stack the goroutine ends on.
//
//go:noinline
func deep(n int, deepest *uintptr) byte {
	var buf [frame]byte
	buf[n%frame] = byte(n)
	if n == 0 {
		*deepest = uintptr(unsafe.Pointer(&buf[0]))
		return buf[0]
	}
	return deep(n-1, deepest) + buf[1]
}

type obj [32]uintptr

// touch is the ordinary Go code that memcheck judges.
//
//go:noinline
func touch(o *obj, v uintptr) uintptr {
	for i := range o {
		o[i] = v + uintptr(i)
	}
	return o[7]
}

type span struct{ lo, hi uintptr }

func main() {
	if C.on_valgrind() == 0 {
		fmt.Fprintln(os.Stderr, "stackreuse: run me under valgrind")
		os.Exit(2)
	}
	var mu sync.Mutex
	var dead []span // each goroutine's last stack, from its deepest frame up
	var wg sync.WaitGroup
	for i := range 160 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var top byte
			var deepest uintptr
			deep(60, &deepest)
			mu.Lock()
			dead = append(dead, span{deepest, uintptr(unsafe.Pointer(&top)) + 64})
			mu.Unlock()
		}()
		if i%8 == 7 { // eight at a time, so stacks are freed and reused
			wg.Wait()
		}
	}
	wg.Wait()
	runtime.GC()
	runtime.GC()
	var n [2][2]int // [unaddressable][in a dead stack]
	var sum uintptr
	objs := make([]*obj, 20000)
	for i := range objs {
		o := new(obj)
		objs[i] = o
		a := uintptr(unsafe.Pointer(o))
		bad := 0
		if C.probe(unsafe.Pointer(o), C.ulong(unsafe.Sizeof(*o))) == 3 {
			bad = 1
		}
		in := 0
		for _, s := range dead {
			if a < s.hi && a+unsafe.Sizeof(*o) > s.lo {
				in = 1
				break
			}
		}
		n[bad][in]++
		sum += touch(o, uintptr(i))
	}
	fmt.Printf("annotated runtime: %v; %d new objects: %d unaddressable (%d of them in a dead goroutine's stack), %d addressable (%d in one); sum %d\n",
		annotated, len(objs), n[1][0]+n[1][1], n[1][1], n[0][0]+n[0][1], n[0][1], sum)
	if annotated && n[1][0]+n[1][1] > 0 {
		os.Exit(1)
	}
}
