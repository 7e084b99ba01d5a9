// SPDX-License-Identifier: MIT

//go:build !linux

package libloop

import "sync/atomic"

// kernelParkWorks: no futex here; every pool parks on a sync.Cond.
const kernelParkWorks = false

func kernelWait(*atomic.Uint32, uint32) {}
func kernelWake(*atomic.Uint32, int)    {}
