// SPDX-License-Identifier: MIT

package libloop

import "sync"

// The typed-value table: the Go values and errors of typed futures and
// tasks. Go memory never crosses into the library, so a TypedFuture's
// value stays here and the future's C result (or exception payload) is
// the key of its entry. The key is given to the library with the
// binding's free func, so the entry lives exactly as long as the library
// holds the value: it is deleted when the library frees it (the host has
// released the future and the loop is done with it), or at once when the
// call that was given it fails. Each entry names the future it belongs
// to, so a word some other code set on a future (a C payload that happens
// to equal a key) never reads as a Go value.

// typedKeyTag marks the keys of the table (the top bit), keeping them
// apart from the small words hosts usually pass as values, whose free
// funcs the free trampoline routes by value too (see RegisterFree).
const typedKeyTag = ^uintptr(0)>>1 + 1

// typedEntry is one value: a result (val) or a failure (err).
type typedEntry struct {
	fid uint64 // the future (or task) id it belongs to
	val any
	err error
}

var typedTable = struct {
	mu   sync.Mutex
	m    map[uintptr]*typedEntry
	next uintptr
}{m: make(map[uintptr]*typedEntry)}

// putTyped stores an entry and returns its key.
func putTyped(e *typedEntry) uintptr {
	typedTable.mu.Lock()
	defer typedTable.mu.Unlock()
	typedTable.next++
	key := typedKeyTag | typedTable.next
	typedTable.m[key] = e
	return key
}

// getTyped returns the entry of key if it belongs to future fid.
func getTyped(key uintptr, fid uint64) *typedEntry {
	if key&typedKeyTag == 0 {
		return nil
	}
	typedTable.mu.Lock()
	defer typedTable.mu.Unlock()
	if e := typedTable.m[key]; e != nil && e.fid == fid {
		return e
	}
	return nil
}

// freeTyped deletes the entry of key: the free func given with each key.
func freeTyped(key uintptr) {
	typedTable.mu.Lock()
	delete(typedTable.m, key)
	typedTable.mu.Unlock()
}

// LiveTypedValues returns how many typed values and errors (of
// TypedFuture and TypedTask) the library still holds: a program that
// releases its typed futures sees it come back down.
func LiveTypedValues() int {
	typedTable.mu.Lock()
	defer typedTable.mu.Unlock()
	return len(typedTable.m)
}
