// SPDX-License-Identifier: MIT

package libloop

// AddReader calls fn(fd) each iteration while fd is readable
// (level-triggered), replacing any reader already set for fd. A closed fd
// fails with an Error matching syscall.EBADF, a regular file with EPERM.
func (l *Loop) AddReader(fd int, fn func(fd int)) error {
	return l.addWatch(fd, fn, l.raw().AddReader, l.readers)
}

// AddWriter calls fn(fd) each iteration while fd is writable; see AddReader.
func (l *Loop) AddWriter(fd int, fn func(fd int)) error {
	return l.addWatch(fd, fn, l.raw().AddWriter, l.writers)
}

// RemoveReader stops watching fd for reading and reports whether a reader
// was set. It is safe on an fd that was already closed.
func (l *Loop) RemoveReader(fd int) (bool, error) {
	return l.removeWatch(fd, l.raw().RemoveReader, l.readers)
}

// RemoveWriter stops watching fd for writing; see RemoveReader.
func (l *Loop) RemoveWriter(fd int) (bool, error) {
	return l.removeWatch(fd, l.raw().RemoveWriter, l.writers)
}

func (l *Loop) addWatch(fd int, fn func(int), add func(uint64, int32, uintptr, uintptr) int32, keys map[int]uintptr) error {
	if fn == nil {
		return EINVAL
	}
	key := addEntry(&cbEntry{kind: kindIO, owner: l.id,
		io: func(_ uint64, fd int) { fn(fd) }})
	if err := check(add(l.id, int32(fd), IOCallbackPtr(), key)); err != nil {
		removeEntry(key)
		return err
	}
	l.mu.Lock()
	old := keys[fd]
	keys[fd] = key
	l.mu.Unlock()
	if old != 0 {
		removeEntry(old)
	}
	return nil
}

func (l *Loop) removeWatch(fd int, remove func(uint64, int32) int32, keys map[int]uintptr) (bool, error) {
	rc := remove(l.id, int32(fd))
	if rc < 0 {
		return false, Error(rc)
	}
	l.mu.Lock()
	old := keys[fd]
	delete(keys, fd)
	l.mu.Unlock()
	if old != 0 {
		removeEntry(old)
	}
	return rc == 1, nil
}
