// SPDX-License-Identifier: MIT

//go:build linux

package libloop

import "golang.org/x/sys/unix"

// threadID identifies the calling OS thread for debug-mode thread checks.
func threadID() int { return unix.Gettid() }
