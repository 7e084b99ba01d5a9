// SPDX-License-Identifier: MIT

package libloop

import "unsafe"

// C buffers. Strings (const char *message) and id arrays (ll_gather's
// futures, ll_all_tasks' output) must be C memory, never the Go heap, so
// they are malloc'd for the call and freed after it; the library copies what
// it keeps.

// CBuf is a block of C memory from libc malloc, zeroed. Free it when done.
type CBuf struct {
	p unsafe.Pointer
	n uintptr
}

// NewCBuf allocates n bytes of zeroed C memory (at least 1 byte, so Ptr is
// never NULL).
func NewCBuf(n uintptr) (*CBuf, error) {
	if err := loadLibc(); err != nil {
		return nil, err
	}
	size := max(n, 1)
	p := libc.malloc(size)
	if p == nil {
		return nil, ENOMEM
	}
	clear(unsafe.Slice((*byte)(p), size))
	return &CBuf{p: p, n: n}, nil
}

// NewCString copies s into C memory with a terminating NUL. A NUL inside s
// ends the C string there.
func NewCString(s string) (*CBuf, error) {
	b, err := NewCBuf(uintptr(len(s)) + 1)
	if err != nil {
		return nil, err
	}
	copy(unsafe.Slice((*byte)(b.p), len(s)), s)
	return b, nil
}

// NewCIDs copies ids into a C array of uint64 (an ll_future array).
func NewCIDs(ids []uint64) (*CBuf, error) {
	b, err := NewCBuf(uintptr(len(ids)) * 8)
	if err != nil {
		return nil, err
	}
	copy(b.Uint64s(), ids)
	return b, nil
}

// Ptr returns the C address.
func (b *CBuf) Ptr() unsafe.Pointer { return b.p }

// Len returns the size asked for, in bytes.
func (b *CBuf) Len() uintptr { return b.n }

// Uint64s views the buffer as uint64s (ids); valid until Free.
func (b *CBuf) Uint64s() []uint64 {
	return unsafe.Slice((*uint64)(b.p), b.n/8)
}

// Free returns the memory to libc; b must not be used afterwards.
func (b *CBuf) Free() {
	if b != nil && b.p != nil {
		libc.free(b.p)
		b.p = nil
	}
}

// withCString calls fn with s as a C string, or with NULL for "" (the
// library reads NULL as an empty message).
func withCString(s string, fn func(p unsafe.Pointer) int32) int32 {
	if s == "" {
		return fn(nil)
	}
	b, err := NewCString(s)
	if err != nil {
		return int32(ENOMEM)
	}
	defer b.Free()
	return fn(b.p)
}

// outCall gives fn an 8-byte C out slot and returns the value it wrote.
func outCall(fn func(out unsafe.Pointer) int32) (uint64, error) {
	out, err := getSlot()
	if err != nil {
		return 0, err
	}
	defer putSlot(out)
	if err := check(fn(out)); err != nil {
		return 0, err
	}
	return *(*uint64)(out), nil
}
