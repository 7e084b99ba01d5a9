// SPDX-License-Identifier: MIT

package main

/*
#include "spawn.h"
*/
import "C"

import (
	"strings"
	"syscall"
	"unsafe"

	"github.com/libloop/libloop/libloop"
)

// Spawn implements libloop.Spawner with posixSpawn.
func (s *loopState) Spawn(r *libloop.SpawnRequest) (int, int, error) { return posixSpawn(r) }

// posixSpawn is the loops' Spawner (loopState.Spawn): a vfork
// clone on Linux (spawn/vfork_linux.c), posix_spawn elsewhere, whose child
// closes the other fds with one close_range and gets SIGPIPE and SIGXFSZ
// back at their defaults. Its strings go to C in one Go buffer, one
// crossing per spawn (spawn/packed.c unpacks it); a string with a NUL in
// it is LL_EINVAL (C would cut it short and misread every string after it).
func posixSpawn(r *libloop.SpawnRequest) (int, int, error) {
	size := len(r.Path) + len(r.Dir) + 2
	for _, s := range r.Argv {
		size += len(s) + 1
	}
	for _, s := range r.Env {
		size += len(s) + 1
	}
	buf := make([]byte, 0, size)
	ok := true
	add := func(s string) {
		if strings.IndexByte(s, 0) >= 0 {
			ok = false
		}
		buf = append(append(buf, s...), 0)
	}
	add(r.Path)
	add(r.Dir)
	for _, s := range r.Argv {
		add(s)
	}
	envc := -1 // Env nil: the host's environ, as it is
	if r.Env != nil {
		envc = len(r.Env)
		for _, s := range r.Env {
			add(s)
		}
	}
	if !ok || len(r.Argv) == 0 {
		return -1, -1, libloop.EINVAL
	}
	x, keep, groups := cSpawnX(&r.SpawnExtra)
	var keepP *C.int
	if len(keep) > 0 {
		keepP = &keep[0]
	}
	var groupsP *C.uint
	if len(groups) > 0 {
		groupsP = &groups[0]
	}
	flags := 0
	if r.Session {
		flags = 1
	}
	var pid, pidfd C.int
	rc := C.ll__spawn_packed((*C.char)(unsafe.Pointer(&buf[0])), C.int(len(r.Argv)), C.int(envc), &x, keepP, groupsP,
		C.int(r.Stdio[0]), C.int(r.Stdio[1]), C.int(r.Stdio[2]), C.int(flags), &pid, &pidfd)
	if rc != 0 {
		return -1, -1, syscall.Errno(-rc)
	}
	return int(pid), int(pidfd), nil
}
