// SPDX-License-Identifier: MIT

package main

/*
#include <stdlib.h>
#include <string.h>
#include "capi.h"
#include "spawn.h"
*/
import "C"

import (
	"unsafe"

	"github.com/libloop/libloop/libloop"
)

// decodeSpawnExtra copies an ll_spawn_extra into the core's SpawnExtra;
// false for a malformed one (size, counts, NULL arrays). Values are the
// core's to check (Loop.Spawn: EINVAL, EBADF).
func decodeSpawnExtra(e *C.ll__cspawn_extra) (*libloop.SpawnExtra, bool) {
	if !sizedStruct(unsafe.Pointer(e), uintptr(e.size), unsafe.Sizeof(*e)) {
		return nil, false
	}
	x := libloop.NoExtra()
	x.InheritFDs = e.inherit_fds != 0
	x.UID, x.GID, x.Umask, x.Pgid, x.PipeSize = int(e.uid), int(e.gid), int(e.umask), int(e.pgid), int(e.pipe_size)
	n := int(e.n_pass_fds)
	if n < 0 || n > 1<<20 || (n > 0 && e.pass_fds == nil) {
		return nil, false
	}
	if n > 0 {
		for _, fd := range unsafe.Slice((*C.int)(unsafe.Pointer(e.pass_fds)), n) {
			x.PassFDs = append(x.PassFDs, int(fd))
		}
	}
	g := int(e.n_groups)
	if g < -1 || g > 65536 || (g > 0 && e.groups == nil) {
		return nil, false
	}
	if g >= 0 {
		x.SetGroups = true
		x.Groups = make([]uint32, g)
		for i, v := range unsafe.Slice((*C.uint)(unsafe.Pointer(e.groups)), g) {
			x.Groups[i] = uint32(v)
		}
	}
	return &x, true
}

// cSpawnX lays the core's normalized extras out for ll__spawn_packed: the
// struct with no pointer in it, and the pass fds and groups as C-typed Go
// slices (nil when there are none) that C points it at for the call.
func cSpawnX(x *libloop.SpawnExtra) (c C.struct_ll__spawn_x, keep []C.int, groups []C.uint) {
	if x.InheritFDs {
		c.inherit = 1
	}
	c.uid, c.gid, c.umask, c.pgid, c.ngroups = C.int(x.UID), C.int(x.GID), C.int(x.Umask), C.int(x.Pgid), -1
	if len(x.PassFDs) > 0 {
		keep = make([]C.int, len(x.PassFDs))
		for i, fd := range x.PassFDs {
			keep[i] = C.int(fd)
		}
		c.nkeep = C.int(len(keep))
	}
	if x.SetGroups {
		c.ngroups = C.int(len(x.Groups))
		groups = make([]C.uint, len(x.Groups))
		for i, g := range x.Groups {
			groups[i] = C.uint(g)
		}
	}
	return c, keep, groups
}
