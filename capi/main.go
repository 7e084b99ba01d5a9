// SPDX-License-Identifier: MIT

// Command capi is libloop's C ABI: //export ll_* functions over the pure-Go
// core, built with -buildmode=c-shared into libloop.so. It translates ids
// and error codes and holds the C side of hot paths; it decides no loop
// policy. The public header is include/libloop.h (hand-written).
package main

/*
#cgo CFLAGS: -I${SRCDIR}/../include -I${SRCDIR}/cloop -I${SRCDIR}/spawn -O2
#cgo LDFLAGS: -lm
#include "capi.h"
*/
import "C"

// The C side of the runtime (cloop.h is its contract with this package)
// and the process spawner's C (spawn.h), each a package of C files.
import (
	_ "github.com/libloop/libloop/capi/cloop"
	_ "github.com/libloop/libloop/capi/spawn"
)

func main() {}

// exportsMap is set by the Makefile to a hash of exports.map (-X), so that
// the build cache relinks the library when the export list changes.
var exportsMap string
