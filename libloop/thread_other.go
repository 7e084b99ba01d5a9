// SPDX-License-Identifier: MIT

//go:build !linux

package libloop

// threadID is 0 where we have no cheap libc-free thread id: the debug-mode
// wrong-thread check then never fires on these systems.
func threadID() int { return 0 }
