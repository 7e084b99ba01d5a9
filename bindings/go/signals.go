// SPDX-License-Identifier: MIT

package libloop

import (
	"sync"
	"syscall"
)

// Signals (libloop/process.h): a Go func runs on the loop's thread, in an
// iteration after each delivery. The callback is an ll_callback, so it is
// an entry of the shared callback table owned by the loop (Close and
// Release drop it); signalKeys remembers each loop's entries by signal so a
// replacement or removal frees the one it replaces.

var signalKeys = struct {
	mu  sync.Mutex
	m   map[uint64]map[syscall.Signal]uintptr // loop id -> signal -> table key
	ids map[uint64]map[syscall.Signal]uint64  // loop id -> signal -> handler id (SignalHandlerID)
}{m: make(map[uint64]map[syscall.Signal]uintptr), ids: make(map[uint64]map[syscall.Signal]uint64)}

// AddSignalHandler runs fn once per delivery of sig (asyncio's
// add_signal_handler), replacing the func sig had on this loop. Several
// loops may watch one signal; each gets every delivery. The library
// installs its handler for sig only; SIGKILL, SIGSTOP and the signals the
// Go runtime handles (SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGTRAP, SIGURG,
// SIGPIPE) fail with EINVAL.
func (l *Loop) AddSignalHandler(sig syscall.Signal, fn func()) error {
	r, err := l.lib.RawProcess()
	if err != nil {
		return err
	}
	if fn == nil {
		return EINVAL
	}
	key := addEntry(&cbEntry{kind: kindPlain, owner: l.id, plain: func(uint64) { fn() }})
	out, err := NewOut()
	if err != nil {
		removeEntry(key)
		return err
	}
	defer out.Free()
	if err := check(r.AddSignalEx(l.id, int32(sig), CallbackPtr(), key, out.Ptr())); err != nil {
		removeEntry(key)
		return err
	}
	signalKeys.mu.Lock()
	keys := signalKeys.m[l.id]
	if keys == nil {
		keys = make(map[syscall.Signal]uintptr)
		signalKeys.m[l.id] = keys
		signalKeys.ids[l.id] = make(map[syscall.Signal]uint64)
	}
	signalKeys.ids[l.id][sig] = out.Value()
	old := keys[sig]
	keys[sig] = key
	signalKeys.mu.Unlock()
	if old != 0 {
		removeEntry(old)
	}
	return nil
}

// RemoveSignalHandler removes sig's func from this loop and reports
// whether there was one. After the last loop stops watching sig, the
// disposition the host had before comes back.
func (l *Loop) RemoveSignalHandler(sig syscall.Signal) (bool, error) {
	r, err := l.lib.RawProcess()
	if err != nil {
		return false, err
	}
	rc := r.RemoveSignal(l.id, int32(sig))
	if rc < 0 {
		return false, Error(rc)
	}
	signalKeys.mu.Lock()
	old := signalKeys.m[l.id][sig]
	delete(signalKeys.m[l.id], sig)
	delete(signalKeys.ids[l.id], sig)
	if len(signalKeys.m[l.id]) == 0 {
		delete(signalKeys.m, l.id)
		delete(signalKeys.ids, l.id)
	}
	signalKeys.mu.Unlock()
	if old != 0 {
		removeEntry(old)
	}
	return rc == 1, nil
}
