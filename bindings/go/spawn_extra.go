// SPDX-License-Identifier: MIT

package libloop

import "unsafe"

// SpawnExtra is ll_spawn_extra: what Python's Popen offers beyond
// ProcessOptions. Its zero value is not "nothing" (UID 0 is root): start
// from NoExtra() and set what you need. The library checks every value
// (EINVAL, EBADF for a pass fd that is not open, EPERM from the child's
// setresuid ..., ENOTSUP where the platform cannot).
type SpawnExtra struct {
	PassFDs    []int    // kept open in the child at the same numbers (close-on-exec cleared)
	InheritFDs bool     // every fd without FD_CLOEXEC stays open in the child (close_fds=False)
	UID, GID   int      // the child's ids; -1 unchanged
	Groups     []uint32 // supplementary groups, when SetGroups (empty: none at all)
	SetGroups  bool
	Umask      int // 0..0777; -1 unchanged
	Pgid       int // -1 none (Flags decide); 0 a new group; > 0 join that group
	PipeSize   int // F_SETPIPE_SZ of each StdioPipe (Linux); 0 the default
}

// NoExtra returns a SpawnExtra that asks for nothing.
func NoExtra() SpawnExtra { return SpawnExtra{UID: -1, GID: -1, Umask: -1, Pgid: -1} }

// cSpawnExtra is ll_spawn_extra's layout (tests/c/test_abi_layout.c).
type cSpawnExtra struct {
	size                 uintptr
	passFDs              uintptr
	nPassFDs, inheritFDs int32
	uid, gid             int32
	groups               uintptr
	nGroups, umask       int32
	pgid, pipeSize       int32
}

// cExtra lays x out as an ll_spawn_extra in C memory (nil for a nil x);
// free releases it.
func cExtra(x *SpawnExtra) (unsafe.Pointer, func(), error) {
	var bufs []*CBuf
	free := func() {
		for _, b := range bufs {
			b.Free()
		}
	}
	if x == nil {
		return nil, free, nil
	}
	b, err := NewCBuf(unsafe.Sizeof(cSpawnExtra{}))
	if err != nil {
		return nil, free, err
	}
	bufs = append(bufs, b)
	c := (*cSpawnExtra)(b.Ptr())
	*c = cSpawnExtra{size: unsafe.Sizeof(cSpawnExtra{}), nPassFDs: int32(len(x.PassFDs)), uid: int32(x.UID),
		gid: int32(x.GID), nGroups: -1, umask: int32(x.Umask), pgid: int32(x.Pgid), pipeSize: int32(x.PipeSize)}
	if x.InheritFDs {
		c.inheritFDs = 1
	}
	if len(x.PassFDs) > 0 {
		arr, err := NewCBuf(uintptr(len(x.PassFDs)) * 4)
		if err != nil {
			return nil, free, err
		}
		bufs = append(bufs, arr)
		for i, fd := range x.PassFDs {
			unsafe.Slice((*int32)(arr.Ptr()), len(x.PassFDs))[i] = int32(fd)
		}
		c.passFDs = uintptr(arr.Ptr())
	}
	if x.SetGroups {
		c.nGroups = int32(len(x.Groups))
		if len(x.Groups) > 0 {
			arr, err := NewCBuf(uintptr(len(x.Groups)) * 4)
			if err != nil {
				return nil, free, err
			}
			bufs = append(bufs, arr)
			copy(unsafe.Slice((*uint32)(arr.Ptr()), len(x.Groups)), x.Groups)
			c.groups = uintptr(arr.Ptr())
		}
	}
	return b.Ptr(), free, nil
}
