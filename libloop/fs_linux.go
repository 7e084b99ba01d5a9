// SPDX-License-Identifier: MIT

package libloop

import "golang.org/x/sys/unix"

// cloneFile makes out a copy-on-write clone of in (ioctl FICLONE: btrfs,
// XFS, bcachefs); other file systems answer EOPNOTSUPP or EXDEV.
func cloneFile(out, in int) error { return unix.IoctlFileClone(out, in) }

// copyContents copies in's size bytes to out in the kernel
// (copy_file_range), falling back to a buffer where the kernel refuses the
// pair (file systems or kernels without it).
func copyContents(out, in int, size int64) error {
	var done int64
	for done < size {
		n, err := retryEINTR(func() (int, error) {
			return unix.CopyFileRange(in, nil, out, nil, int(min(size-done, MaxFSIO)), 0)
		})
		if err != nil {
			if done == 0 && kernelCopyRefused(err) {
				_, err = copyByBuffer(out, in, -1, -1)
			}
			return err
		}
		if n == 0 {
			break // the file shrank meanwhile
		}
		done += int64(n)
	}
	if done == size {
		// A file that grew meanwhile, or whose stat size says nothing
		// (procfs): copy whatever follows.
		_, err := copyByBuffer(out, in, -1, -1)
		return err
	}
	return nil
}

// kernelCopyRefused: errors of copy_file_range and sendfile that mean "not
// for these fds" rather than an I/O failure.
func kernelCopyRefused(err error) bool {
	switch err {
	case unix.EINVAL, unix.ENOSYS, unix.EXDEV, unix.EOPNOTSUPP, unix.EPERM:
		return true
	}
	return false
}

// sendfileFiles is FSSendfile's work: one sendfile(2), or a buffered copy
// where the kernel refuses the pair of fds.
func sendfileFiles(out, in int, off int64, n int) (int, error) {
	var offp *int64
	if off >= 0 {
		offp = &off
	}
	sent, err := retryEINTR(func() (int, error) { return unix.Sendfile(out, in, offp, n) })
	if err != nil && kernelCopyRefused(err) {
		m, err := copyByBuffer(out, in, off, int64(n))
		return int(m), err
	}
	return sent, err
}
