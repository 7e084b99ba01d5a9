package libloop

// fdTable holds the loop's fdWatch records, indexed by fd: readiness finds
// its owner with one bounds-checked load instead of a map lookup, and a
// watched fd costs its 40-byte slot, no allocation of its own. fds beyond
// denseFDs (rare: a host that raised its limit that far) go to a map.
type fdTable struct {
	dense  []fdWatch
	sparse map[int32]*fdWatch
	n      int // fds with a record
}

// denseFDs bounds the slice (40 MiB of slots at the very most).
const denseFDs = 1 << 20

// get returns fd's record, or nil. The pointer is valid until the next put.
func (t *fdTable) get(fd int32) *fdWatch {
	if fd >= 0 && int(fd) < len(t.dense) {
		if w := &t.dense[fd]; w.used {
			return w
		}
		return nil
	}
	if fd >= denseFDs {
		return t.sparse[fd]
	}
	return nil
}

// put makes fd's (empty) record and returns it; fd must have none. It may
// move the records: pointers from get are stale afterwards.
func (t *fdTable) put(fd int32) *fdWatch {
	t.n++
	if fd >= denseFDs {
		if t.sparse == nil {
			t.sparse = make(map[int32]*fdWatch)
		}
		w := &fdWatch{used: true}
		t.sparse[fd] = w
		return w
	}
	if int(fd) >= len(t.dense) {
		grown := make([]fdWatch, max(int(fd)+1, 2*len(t.dense), 64))
		copy(grown, t.dense)
		t.dense = grown
	}
	w := &t.dense[fd]
	*w = fdWatch{used: true}
	return w
}

// del forgets fd's record.
func (t *fdTable) del(fd int32) {
	if w := t.get(fd); w != nil {
		t.n--
		if fd >= denseFDs {
			delete(t.sparse, fd)
		} else {
			*w = fdWatch{}
		}
	}
}

// each calls fn for every record; fn may del the fd it is given.
func (t *fdTable) each(fn func(fd int32, w *fdWatch)) {
	for i := range t.dense {
		if t.dense[i].used {
			fn(int32(i), &t.dense[i])
		}
	}
	for fd, w := range t.sparse {
		fn(fd, w)
	}
}
