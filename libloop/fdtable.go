// SPDX-License-Identifier: MIT

package libloop

// fdTable holds the loop's fdWatch records, indexed by fd: readiness finds
// its owner with two loads instead of a map lookup, and a watched fd costs
// its 24-byte slot, no allocation of its own. Slots live in fixed chunks,
// so the table grows without copying (no garbage while a server accepts
// tens of thousands of connections). fds beyond denseFDs go to a map.
type fdTable struct {
	chunks [][]fdWatch
	sparse map[int32]*fdWatch
	n      int // fds with a record
}

const (
	fdChunkBits = 10
	fdChunk     = 1 << fdChunkBits
	denseFDs    = 1 << 20 // at most 1024 chunks
)

func (t *fdTable) slot(fd int32) *fdWatch {
	c := int(fd >> fdChunkBits)
	if c < len(t.chunks) && t.chunks[c] != nil {
		return &t.chunks[c][fd&(fdChunk-1)]
	}
	return nil
}

// get returns fd's record, or nil.
func (t *fdTable) get(fd int32) *fdWatch {
	if fd >= 0 && fd < denseFDs {
		if w := t.slot(fd); w != nil && w.used {
			return w
		}
		return nil
	}
	return t.sparse[fd]
}

// put makes fd's (empty) record and returns it; fd must have none.
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
	c := int(fd >> fdChunkBits)
	for len(t.chunks) <= c {
		t.chunks = append(t.chunks, nil)
	}
	if t.chunks[c] == nil {
		t.chunks[c] = make([]fdWatch, fdChunk)
	}
	w := &t.chunks[c][fd&(fdChunk-1)]
	*w = fdWatch{used: true}
	return w
}

// del forgets fd's record.
func (t *fdTable) del(fd int32) {
	w := t.get(fd)
	if w == nil {
		return
	}
	t.n--
	if fd >= denseFDs {
		delete(t.sparse, fd)
	} else {
		*w = fdWatch{}
	}
}

// each calls fn for every record; fn may del the fd it is given.
func (t *fdTable) each(fn func(fd int32, w *fdWatch)) {
	for c, chunk := range t.chunks {
		for i := range chunk {
			if chunk[i].used {
				fn(int32(c<<fdChunkBits+i), &chunk[i])
			}
		}
	}
	for fd, w := range t.sparse {
		fn(fd, w)
	}
}
