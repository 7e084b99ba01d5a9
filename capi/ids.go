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
// matches and a forged one almost never does. Id 0 is never issued.
type idTable struct {
	mu    sync.RWMutex
	slots []idSlot
	free  []uint32
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

// add registers obj and returns its id, or 0 when the table is full.
func (t *idTable) add(k kind, obj any) uint64 {
	t.mu.Lock()
	defer t.mu.Unlock()
	var i uint32
	if n := len(t.free); n > 0 {
		i = t.free[n-1]
		t.free = t.free[:n-1]
	} else {
		if len(t.slots) >= maxSlots {
			return 0
		}
		t.slots = append(t.slots, idSlot{gen: 1})
		i = uint32(len(t.slots) - 1)
	}
	s := &t.slots[i]
	s.kind, s.obj = k, obj
	return uint64(s.gen)<<32 | uint64(i+1)
}

// get returns the object id names if it is live and of kind k.
func (t *idTable) get(id uint64, k kind) (any, bool) {
	i := uint32(id) - 1
	t.mu.RLock()
	if uint64(i) >= uint64(len(t.slots)) {
		t.mu.RUnlock()
		return nil, false
	}
	s := t.slots[i]
	t.mu.RUnlock()
	if s.gen != uint32(id>>32) || s.kind != k || s.obj == nil {
		return nil, false
	}
	return s.obj, true
}

// kindOf returns the kind of a live id, or 0.
func (t *idTable) kindOf(id uint64) kind {
	i := uint32(id) - 1
	t.mu.RLock()
	defer t.mu.RUnlock()
	if uint64(i) >= uint64(len(t.slots)) {
		return 0
	}
	s := &t.slots[i]
	if s.gen != uint32(id>>32) || s.obj == nil {
		return 0
	}
	return s.kind
}

// remove frees id's slot; it reports whether id was live.
func (t *idTable) remove(id uint64) bool {
	i := uint32(id) - 1
	t.mu.Lock()
	defer t.mu.Unlock()
	if uint64(i) >= uint64(len(t.slots)) {
		return false
	}
	s := &t.slots[i]
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
