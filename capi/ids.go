package main

import "sync"

// kind tags what an id names, so an id of another kind is rejected.
type kind uint8

const (
	kindLoop kind = iota + 1
	kindHandle
	kindFuture
	kindTask
)

// idTable maps 64-bit ids to objects. An id is generation<<32 | (slot+1):
// when a slot is freed its generation advances, so a stale id no longer
// matches and a forged one almost never does. Id 0 is never issued. Slots
// live in fixed-size chunks, so the table grows without copying (a copy of
// interface-holding slots would pay a write barrier per slot).
type idTable struct {
	mu     sync.RWMutex
	chunks [][]idSlot
	n      uint32 // slots ever used
	free   []uint32
}

type idSlot struct {
	gen  uint32
	kind kind
	obj  any
}

var ids idTable

// maxSlots bounds the table (about 16M live objects) so a leak shows up as
// LL_ENOMEM instead of exhausting memory.
const maxSlots = 1 << 24

const chunkBits = 12

func (t *idTable) slot(i uint32) *idSlot {
	return &t.chunks[i>>chunkBits][i&(1<<chunkBits-1)]
}

// add registers obj and returns its id, or 0 when the table is full.
func (t *idTable) add(k kind, obj any) uint64 {
	t.mu.Lock()
	defer t.mu.Unlock()
	var i uint32
	if n := len(t.free); n > 0 {
		i = t.free[n-1]
		t.free = t.free[:n-1]
	} else {
		if t.n >= maxSlots {
			return 0
		}
		if int(t.n>>chunkBits) == len(t.chunks) {
			t.chunks = append(t.chunks, make([]idSlot, 1<<chunkBits))
		}
		i = t.n
		t.n++
		t.slot(i).gen = 1
	}
	s := t.slot(i)
	s.kind, s.obj = k, obj
	return uint64(s.gen)<<32 | uint64(i+1)
}

// lookup returns id's live slot (a copy), or false; the caller need not lock.
func (t *idTable) lookup(id uint64) (idSlot, bool) {
	i := uint32(id) - 1
	t.mu.RLock()
	if uint64(i) >= uint64(t.n) {
		t.mu.RUnlock()
		return idSlot{}, false
	}
	s := *t.slot(i)
	t.mu.RUnlock()
	if s.gen != uint32(id>>32) || s.obj == nil {
		return idSlot{}, false
	}
	return s, true
}

// get returns the object id names if it is live and of kind k.
func (t *idTable) get(id uint64, k kind) (any, bool) {
	s, ok := t.lookup(id)
	if !ok || s.kind != k {
		return nil, false
	}
	return s.obj, true
}

// kindOf returns the kind of a live id, or 0.
func (t *idTable) kindOf(id uint64) kind {
	s, _ := t.lookup(id)
	return s.kind
}

// remove frees id's slot; it reports whether id was live.
func (t *idTable) remove(id uint64) bool {
	i := uint32(id) - 1
	t.mu.Lock()
	defer t.mu.Unlock()
	if uint64(i) >= uint64(t.n) {
		return false
	}
	s := t.slot(i)
	if s.gen != uint32(id>>32) || s.obj == nil {
		return false
	}
	s.obj, s.kind = nil, 0
	s.gen++
	if s.gen == 0 {
		s.gen = 1
	}
	t.free = append(t.free, i)
	return true
}
