// SPDX-License-Identifier: MIT

// Package spawn is the C that starts a child process for ll_spawn and
// ll_spawn_ex: spawn.h is its interface (ll__posix_spawn and
// ll__spawn_packed). On Linux a vfork-style clone3 onto a per-thread stack
// (vfork_linux.c, clone3.c) with a short scheduler slice around it
// (slice.c); elsewhere posix_spawn (posix.c). The loop decides what to run
// and watches the exit; this package only starts. It holds no Go code and
// calls nothing in Go: capi (spawner.go) links it into libloop.so.
package spawn

/*
#cgo CFLAGS: -O2
#include "spawn.h"
*/
import "C"
