// SPDX-License-Identifier: MIT

package main

import (
	"testing"
	"unsafe"

	"golang.org/x/sys/unix"
)

// Any ll_spawn_extra a host can lay out (a claimed size around ours with a
// tail of any bytes, pass fds of any value and count, ids, groups, umask,
// pgid, pipe size) for a program that does not exist: the call is refused
// (never a child), the id is left alone, no fd stays open, and the neutral
// extras of our own size give what ll_spawn gives (-ENOENT).
func FuzzSpawnExtra(f *testing.F) {
	f.Add(int16(0), []byte{}, int8(0), false, int32(-1), int32(-1), int8(-1), int32(-1), int32(-1), int32(0), []byte{})
	f.Add(int16(0), []byte{0, 1, 200}, int8(3), true, int32(0), int32(0), int8(2), int32(0o27), int32(0), int32(65536), []byte{})
	f.Add(int16(8), []byte{5}, int8(1), false, int32(-7), int32(1<<30), int8(0), int32(0o1000), int32(1), int32(-1), []byte{0, 0, 0, 0, 0, 0, 0, 1})
	f.Add(int16(-8), []byte{}, int8(-1), false, int32(-1), int32(-1), int8(-2), int32(-1), int32(-1), int32(0), []byte{})
	loop := spawnFuzzLoop(f)
	argv := cArray([]string{"x"})
	var o _Ctype_ll_process_options
	o.file = cstr("/nonexistent-dir/no-such-program")
	o.argv = (**_Ctype_char)(unsafe.Pointer(&argv[0]))
	o.stdio = [3]_Ctype_int{-3, -3, -3}
	opts := (*_Ctype_ll__cprocess_options)(unsafe.Pointer(&o))
	ours := int(unsafe.Sizeof(_Ctype_ll_spawn_extra{}))
	f.Fuzz(func(t *testing.T, sizeDelta int16, fds []byte, nFDs int8, inherit bool, uid, gid int32, nGroups int8,
		umask, pgid, pipeSize int32, tail []byte) {
		before := fdCount(t)
		size := ours + int(sizeDelta)
		buf := make([]byte, max(size, ours)+8) // the host's memory: as many bytes as it claims
		copy(buf[ours:], tail)
		e := (*_Ctype_ll_spawn_extra)(unsafe.Pointer(&buf[0]))
		e.size = _Ctype_size_t(max(size, 0))
		passFDs := make([]_Ctype_int, len(fds)+1)
		for i, b := range fds {
			passFDs[i] = _Ctype_int(int8(b)) // small numbers, negatives too
		}
		if nFDs != 0 && (nFDs < 0 || int(nFDs) <= len(fds)) {
			e.pass_fds, e.n_pass_fds = &passFDs[0], _Ctype_int(nFDs)
		}
		if inherit {
			e.inherit_fds = 1
		}
		e.uid, e.gid, e.umask, e.pgid, e.pipe_size = _Ctype_int(uid), _Ctype_int(gid), _Ctype_int(umask),
			_Ctype_int(pgid), _Ctype_int(pipeSize)
		groups := []_Ctype_uint{65534, 0, 4242, 1}
		e.n_groups = _Ctype_int(nGroups)
		if nGroups > 0 && int(nGroups) <= len(groups) {
			e.groups = &groups[0]
		}
		var p cid = 77
		rc := ll_spawn_ex(loop, opts, (*_Ctype_ll__cspawn_extra)(unsafe.Pointer(e)), nil, nil, &p)
		if rc >= 0 || p != 77 {
			t.Fatalf("ll_spawn_ex of a missing program: rc %d, id %d", rc, p)
		}
		neutral := sizeDelta == 0 && e.n_pass_fds == 0 && !inherit && uid == -1 && gid == -1 && nGroups == -1 &&
			umask == -1 && pgid == -1 && pipeSize == 0
		if neutral && rc != -_Ctype_int(unix.ENOENT) {
			t.Fatalf("neutral extras, missing program: rc %d, want -ENOENT", rc)
		}
		if after := fdCount(t); after != before {
			t.Fatalf("a refused ll_spawn_ex changed the fd count %d -> %d", before, after)
		}
	})
}
