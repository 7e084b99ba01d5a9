// SPDX-License-Identifier: MIT

package main

/*
#include <stdlib.h>
#include "capi.h"
#include "spawn.h"

extern char **environ;
// The host's environment as it is now (setenv included): the Go runtime's
// copy (os.Environ) is a snapshot taken when the library was loaded.
static const ll__cchar *const *ll__environ(void) { return (const ll__cchar *const *)environ; }
static char *ll__getenv(const char *name) { return getenv(name); }
*/
import "C"

import (
	"syscall"
	"unsafe"

	"github.com/libloop/libloop/libloop"
)

// Process ids continue the kinds of events.go.
const kindProcess kind = 18

// maxCStrings bounds the entries of an argv or env array, so that a
// missing terminator ends in a refusal rather than a read running on. It
// lies past anything execve takes: Linux counts a pointer per entry against
// at most 6 MiB (786,432 entries; the BSDs' ARG_MAX is smaller), so an
// array this long is refused with E2BIG, execve's own answer to it.
const maxCStrings = 1 << 20

// cStrings copies a NULL-terminated C string array; false if it has more
// than maxCStrings entries.
func cStrings(p **C.ll__cchar) ([]string, bool) {
	if p == nil {
		return nil, true
	}
	// One entry at a time (no slice over the whole bound: the array may be
	// much shorter, and a view past its end is an invalid conversion).
	var out []string
	for i := uintptr(0); i <= maxCStrings; i++ {
		s := *(**C.ll__cchar)(unsafe.Add(unsafe.Pointer(p), i*unsafe.Sizeof(p)))
		if s == nil {
			return out, true
		}
		out = append(out, goString(s))
	}
	return nil, false
}

//export ll_spawn
func ll_spawn(loop C.uint64_t, opts *C.ll__cprocess_options, fn C.ll_protocol_fn, arg unsafe.Pointer, out *C.uint64_t) C.int {
	return ll_spawn_ex(loop, opts, nil, fn, arg, out)
}

//export ll_spawn_ex
func ll_spawn_ex(loop C.uint64_t, opts *C.ll__cprocess_options, extra *C.ll__cspawn_extra, fn C.ll_protocol_fn,
	arg unsafe.Pointer, out *C.uint64_t) C.int {
	s, rc := getLoop(loop)
	if rc != 0 {
		return rc
	}
	if opts == nil || out == nil || opts.file == nil || opts.argv == nil {
		return C.int(libloop.EINVAL)
	}
	argv, ok1 := cStrings((**C.ll__cchar)(unsafe.Pointer(opts.argv)))
	// env NULL inherits: the core's Env stays nil and posixSpawn hands C's
	// environ to the child as it is (no copy into Go and back).
	env, ok2 := cStrings((**C.ll__cchar)(unsafe.Pointer(opts.env)))
	if ok1 && len(argv) == 0 {
		return C.int(libloop.EINVAL)
	}
	if !ok1 || !ok2 {
		return C.int(-int(syscall.E2BIG))
	}
	o := &libloop.ProcessOptions{File: goString(opts.file), Argv: argv, Env: env,
		Dir: goString(opts.cwd), Flags: int(opts.flags)}
	if env == nil && opts.env != nil {
		o.Env = []string{} // an empty environment, not "inherit"
	}
	for i := range o.Stdio {
		o.Stdio[i] = int(opts.stdio[i])
	}
	if extra != nil {
		x, ok := decodeSpawnExtra(extra)
		if !ok {
			return C.int(libloop.EINVAL)
		}
		o.Extra = x
	}
	if opts.cwd != nil && *opts.cwd == 0 {
		// "" names no directory (Popen: FileNotFoundError); the core's
		// empty Dir would mean "inherit", as NULL does here.
		return C.int(-int(syscall.ENOENT))
	}
	// Ids and slots first (the process's and each pipe's): a spawn refused
	// for want of them (LL_ENOMEM) has started no child.
	var claims [4]claim
	n := 0
	for i := 0; i <= 3; i++ {
		if i < 3 && o.Stdio[i] != C.LL_STDIO_PIPE {
			continue
		}
		c, ok := s.claimSlot()
		if !ok {
			for _, c := range claims[:n] {
				s.unclaim(c)
			}
			return C.int(libloop.ENOMEM)
		}
		claims[n] = c
		n++
	}
	p, err := s.loop.Spawn(o, nil)
	if err != nil {
		for _, c := range claims[:n] {
			s.unclaim(c)
		}
		return errCode(err)
	}
	fnAddr, argAddr := uintptr(unsafe.Pointer(fn)), uintptr(arg)
	used := 0
	for i := 0; i < 3; i++ {
		if o.Stdio[i] != C.LL_STDIO_PIPE {
			continue
		}
		if t := p.Pipe(i); t != nil {
			bindTransport(claims[used], t, fnAddr, argAddr)
		} else {
			s.unclaim(claims[used])
		}
		used++
	}
	ref := s.bindProcess(claims[used], p, fnAddr, argAddr)
	*out = C.uint64_t(ref.id)
	return 0
}

// procRef is what a core Process's Data holds: its id and protocol slot,
// which outlives the id until the exit has been delivered.
type procRef struct {
	id                  uint64
	proto               *C.ll__proto
	released, delivered bool // the host released the id / the exit was delivered
}

// Environ implements libloop.HostEnv: the C host's environ, which sees
// the host's setenv.
func (s *loopState) Environ() []string {
	env, _ := cStrings(C.ll__environ())
	return env
}

// Getenv implements libloop.HostEnv with C's getenv.
func (s *loopState) Getenv(key string) string {
	ck := C.CString(key)
	defer C.free(unsafe.Pointer(ck))
	return C.GoString(C.ll__getenv(ck))
}

// bindProcess gives p a claimed id and protocol slot (for LL_PROCESS_EXITED).
func (s *loopState) bindProcess(c claim, p *libloop.Process, fn, arg uintptr) *procRef {
	id, slot := c.id, c.slot
	ids.fill(id, kindProcess, p)
	slot.fn, slot.arg = C.uintptr_t(fn), C.uintptr_t(arg)
	ref := &procRef{id: id, proto: slot}
	p.Data, p.Tag = ref, id
	s.netInit().live[id] = slot
	return ref
}

// getProcess resolves a process id for a call on its loop's thread.
func getProcess(id C.uint64_t) (*libloop.Process, *loopState, C.int) {
	obj, ok := ids.get(uint64(id), kindProcess)
	if !ok {
		return nil, nil, C.int(libloop.EBADHANDLE)
	}
	p := obj.(*libloop.Process)
	s := p.Loop().Data.(*loopState)
	if rc := s.enter(s.debugCheck()); rc != 0 {
		return nil, nil, rc
	}
	return p, s, 0
}

// releaseProcess ends a process id. Its protocol slot stays until the exit
// has been delivered (the child still runs and is still reaped).
func releaseProcess(id C.uint64_t) C.int {
	p, s, rc := getProcess(id)
	if rc != 0 {
		return rc
	}
	ref := p.Data.(*procRef)
	if !ids.remove(uint64(id)) {
		return C.int(libloop.EBADHANDLE)
	}
	ref.released = true
	if _, exited := p.ReturnCode(); exited && ref.delivered {
		s.freeSlot(ref)
	}
	return 0
}

// exitDelivered notes p's exit has reached the host; a released process's
// slot can go.
func (s *loopState) exitDelivered(p *libloop.Process) {
	if ref, ok := p.Data.(*procRef); ok {
		ref.delivered = true
		if ref.released {
			s.freeSlot(ref)
		}
	}
}

// freeSlot frees a retired process's protocol slot.
func (s *loopState) freeSlot(ref *procRef) {
	if s.net != nil {
		delete(s.net.live, ref.id)
	}
	if s.net != nil {
		s.net.slots.put(ref.proto)
	}
	ref.proto = nil
}

//export ll_process_pid
func ll_process_pid(id C.uint64_t, pid *C.int) C.int {
	p, _, rc := getProcess(id)
	if rc != 0 {
		return rc
	}
	if pid == nil {
		return C.int(libloop.EINVAL)
	}
	*pid = C.int(p.Pid())
	return 0
}

//export ll_process_pipe
func ll_process_pipe(id C.uint64_t, fd C.int, out *C.uint64_t) C.int {
	p, _, rc := getProcess(id)
	if rc != 0 {
		return rc
	}
	t := p.Pipe(int(fd))
	if out == nil || t == nil {
		return C.int(libloop.EINVAL)
	}
	if protoOf(t) == nil {
		return C.int(libloop.ECLOSED)
	}
	*out = C.uint64_t(t.Tag)
	return 0
}

//export ll_process_send_signal
func ll_process_send_signal(id C.uint64_t, sig C.int) C.int {
	p, _, rc := getProcess(id)
	if rc != 0 {
		return rc
	}
	return errCode(p.SendSignal(int(sig)))
}

//export ll_process_terminate
func ll_process_terminate(id C.uint64_t) C.int { return ll_process_send_signal(id, 15) }

//export ll_process_kill
func ll_process_kill(id C.uint64_t) C.int { return ll_process_send_signal(id, 9) }

//export ll_process_returncode
func ll_process_returncode(id C.uint64_t, out *C.int) C.int {
	p, _, rc := getProcess(id)
	if rc != 0 {
		return rc
	}
	if out == nil {
		return C.int(libloop.EINVAL)
	}
	code, exited := p.ReturnCode()
	if !exited {
		return C.int(libloop.ESTATE)
	}
	*out = C.int(code)
	return 0
}

//export ll_process_wait
func ll_process_wait(id C.uint64_t, out *C.uint64_t) C.int {
	p, s, rc := getProcess(id)
	if rc != 0 {
		return rc
	}
	return pendingFuture(C.uint64_t(s.id), out, func(s *loopState, f *libloop.Future, finish func()) error {
		p.OnExit(func(code int) {
			defer finish()
			if !f.Done() {
				f.SetResult(uintptr(int64(code)), nil)
			}
		})
		return nil
	})
}
