// SPDX-License-Identifier: MIT

//go:build !linux

package libloop

import "golang.org/x/sys/unix"

// cloneFile: no portable copy-on-write clone call here (macOS has
// clonefile(2) by path, not by fd); FSCopyfileFicloneForce fails with
// ENOSYS, as libuv's does where it has none.
func cloneFile(out, in int) error { return unix.ENOSYS }

// copyContents copies in to out through a buffer.
func copyContents(out, in int, size int64) error {
	_, err := copyByBuffer(out, in, -1, -1)
	return err
}

// sendfileFiles copies through a buffer: the BSDs' and macOS's sendfile(2)
// writes only to sockets.
func sendfileFiles(out, in int, off int64, n int) (int, error) {
	m, err := copyByBuffer(out, in, off, int64(n))
	return int(m), err
}
