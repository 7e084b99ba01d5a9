// SPDX-License-Identifier: MIT

package libloop

import (
	"fmt"
	"runtime"
	"sync"
	"unsafe"

	"github.com/ebitengine/purego"
)

// C memory. Out parameters (ll_loop *out, ll_handle *out) must point to C
// memory, never into the Go heap, so the binding keeps a pool of 8-byte slots
// carved from libc malloc'd chunks. Slots are reused, never freed: the pool
// only grows to the number of calls in flight at once.

var libc struct {
	once   sync.Once
	err    error
	malloc func(size uintptr) unsafe.Pointer
	free   func(p unsafe.Pointer)
}

func libcNames() []string {
	switch runtime.GOOS {
	case "darwin", "ios":
		return []string{"/usr/lib/libSystem.B.dylib"}
	case "freebsd":
		return []string{"libc.so.7"}
	default:
		return []string{"libc.so.6", "libc.so"}
	}
}

func loadLibc() error {
	libc.once.Do(func() {
		var errs []error
		for _, name := range libcNames() {
			h, err := purego.Dlopen(name, purego.RTLD_NOW|purego.RTLD_GLOBAL)
			if err != nil {
				errs = append(errs, err)
				continue
			}
			purego.RegisterLibFunc(&libc.malloc, h, "malloc")
			purego.RegisterLibFunc(&libc.free, h, "free")
			return
		}
		libc.err = fmt.Errorf("libloop: cannot load the C library for out parameters: %v", errs)
	})
	return libc.err
}

// slotsPerChunk is how many 8-byte slots one malloc call provides.
const slotsPerChunk = 64

var outPool struct {
	mu   sync.Mutex
	free []unsafe.Pointer
}

// getSlot returns an 8-byte C slot, zeroed.
func getSlot() (unsafe.Pointer, error) {
	outPool.mu.Lock()
	defer outPool.mu.Unlock()
	if len(outPool.free) == 0 {
		if err := loadLibc(); err != nil {
			return nil, err
		}
		chunk := libc.malloc(8 * slotsPerChunk)
		if chunk == nil {
			return nil, ENOMEM
		}
		for i := range slotsPerChunk {
			outPool.free = append(outPool.free, unsafe.Add(chunk, 8*i))
		}
	}
	n := len(outPool.free) - 1
	p := outPool.free[n]
	outPool.free = outPool.free[:n]
	*(*uint64)(p) = 0
	return p, nil
}

func putSlot(p unsafe.Pointer) {
	outPool.mu.Lock()
	outPool.free = append(outPool.free, p)
	outPool.mu.Unlock()
}

// Out is an 8-byte out parameter in C memory, for raw calls such as
// Raw.LoopNew(out.Ptr()). Free returns it to the pool.
type Out struct{ p unsafe.Pointer }

// NewOut returns a zeroed C out parameter.
func NewOut() (*Out, error) {
	p, err := getSlot()
	if err != nil {
		return nil, err
	}
	return &Out{p: p}, nil
}

// Ptr returns the C address to pass as the out pointer.
func (o *Out) Ptr() unsafe.Pointer { return o.p }

// Value reads the 64-bit value the library wrote.
func (o *Out) Value() uint64 { return *(*uint64)(o.p) }

// Set stores v, e.g. a sentinel to check a failing call leaves *out alone.
func (o *Out) Set(v uint64) { *(*uint64)(o.p) = v }

// Free returns the slot to the pool; o must not be used afterwards.
func (o *Out) Free() {
	if o.p != nil {
		putSlot(o.p)
		o.p = nil
	}
}

// goString copies a NUL-terminated C string; nil gives "".
func goString(p unsafe.Pointer) string {
	if p == nil {
		return ""
	}
	n := 0
	for *(*byte)(unsafe.Add(p, n)) != 0 {
		n++
	}
	return string(unsafe.Slice((*byte)(p), n))
}

// GoString copies the NUL-terminated C string at p (as returned by the raw
// Raw.StrError); nil gives "".
func GoString(p unsafe.Pointer) string { return goString(p) }
