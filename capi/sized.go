// SPDX-License-Identifier: MIT

package main

import "unsafe"

// Size-first structs (ll_spawn_extra, ll_connect_options): the host sets
// the first field to the sizeof its header gave, so a newer header's
// larger struct reaches an older library, which accepts it only while the
// fields it does not know are zero.

// maxStructSize bounds the size a host may claim: the tail beyond ours is
// read to check it, so an absurd size is refused rather than read.
const maxStructSize = 4096

// sizedStruct reports whether a struct of size bytes at p, whose known
// part is known bytes, may be read: size at least known, at most
// maxStructSize, and any tail zero (so nothing it asks for is ignored).
func sizedStruct(p unsafe.Pointer, size, known uintptr) bool {
	if size < known || size > maxStructSize {
		return false
	}
	for _, b := range unsafe.Slice((*byte)(p), size)[known:] {
		if b != 0 {
			return false
		}
	}
	return true
}
