// SPDX-License-Identifier: MIT

// Package cloop is the C side of libloop's runtime: the per-loop record
// that lets a host's calls skip a crossing into Go (its call_soon queue,
// timers, thread-safe post queue and transport map), the runners that call
// many host callbacks in one crossing, and the public calls' fast paths.
// It holds no Go code: capi links it into libloop.so and is its only user.
//
// cloop.h is the contract: what C owns, what Go owns, and the three places
// where they meet. Its C calls capi's //export functions (declared there
// under "Go's side"), which the final link resolves.
package cloop

/*
#cgo CFLAGS: -I${SRCDIR}/../../include -O2
#include "cloop.h"
*/
import "C"
