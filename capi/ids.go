// SPDX-License-Identifier: MIT

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

// Id layout: generation<<slotBits | (slot+1). The low 24 bits are never 0
// (slot+1 >= 1), so id 0 is never issued; the next 39 bits are the slot's
// generation, advanced each time the slot is freed, so a stale id stops
// matching and a forged one almost never matches.
//
// Why 39 bits of generation and FIFO reuse: a stale id aliases a new object
// only after its slot has been freed 2^39 times. Free slots are reused
// oldest first, and only while more than idTable.reserve of them are free,
// so a create/release cycle spreads over at least reserve (3840) slots: at
// ~4.3M cycles/s (the fastest measured) one slot wraps after about 15 years.
// With 32 bits and LIFO reuse (the old layout) it took 17 minutes.
//
// The generation has 39 bits, not 40: bit 63 of a table id is always 0, and
// ids with it set name handle timers kept in C (cloop/timerslab.h), so one kind
// is never taken for the other.
const (
	slotBits = 24
	genBits  = 63 - slotBits
	slotMask = 1<<slotBits - 1
	genMask  = 1<<genBits - 1
)

// maxSlots bounds the table (about 16M live objects, as slot+1 must fit in
// slotBits) so a leak shows up as LL_ENOMEM instead of exhausting memory.
const maxSlots = slotMask

// defaultReserve is how many free slots the table keeps aside before it
// reuses one: a little under one chunk (128 KiB of slots), so a program
// with up to 256 live objects never needs a second chunk for it.
const defaultReserve = 1<<chunkBits - 256

// idTable maps 64-bit ids to objects. Slots live in fixed-size chunks, so
// the table grows without copying (a copy of interface-holding slots would
// pay a write barrier per slot). Every method is safe from any thread.
type idTable struct {
	mu      sync.RWMutex
	chunks  [][]idSlot
	n       uint32 // slots ever used
	free    slotQueue
	reserve int // free slots kept aside before one is reused (see the layout note)
	// limit, if not 0, lowers maxSlots: tests fill the table with it to
	// reach the LL_ENOMEM paths without 16M live objects.
	limit uint32
}

// idSlot is one table entry; obj == nil marks a free slot. Its generation,
// kind and host flag share one word (24 bytes a slot, not 32: a server
// holds an id per connection):
//   - bits 0..38: the generation, 1..genMask;
//   - bits 40..47: the kind;
//   - bit 48, host: set until the host's reference is taken (ll_release):
//     only one take of an id succeeds, even from racing threads.
type idSlot struct {
	obj  any
	word uint64
}

const (
	slotKindShift = 40
	slotHostBit   = 1 << 48
)

func (s *idSlot) gen() uint64 { return s.word & genMask }
func (s *idSlot) kind() kind  { return kind(s.word >> slotKindShift) }
func (s *idSlot) host() bool  { return s.word&slotHostBit != 0 }

// set writes the slot's generation, kind and host flag.
func (s *idSlot) set(gen uint64, k kind, host bool) {
	w := gen&genMask | uint64(k)<<slotKindShift
	if host {
		w |= slotHostBit
	}
	s.word = w
}

var ids = idTable{reserve: defaultReserve}

const chunkBits = 12

func (t *idTable) slot(i uint32) *idSlot {
	return &t.chunks[i>>chunkBits][i&(1<<chunkBits-1)]
}

// makeID composes an id from a slot index and its generation.
func makeID(i uint32, gen uint64) uint64 { return gen<<slotBits | uint64(i+1) }

// add registers obj with the host's reference and returns its id, or 0 when
// the table is full.
func (t *idTable) add(k kind, obj any) uint64 {
	t.mu.Lock()
	defer t.mu.Unlock()
	var i uint32
	max := uint32(maxSlots)
	if t.limit != 0 {
		max = t.limit
	}
	if t.free.len() > t.reserve || (t.free.len() > 0 && t.n >= max) {
		i = t.free.pop()
	} else {
		if t.n >= max {
			return 0
		}
		if int(t.n>>chunkBits) == len(t.chunks) {
			t.chunks = append(t.chunks, make([]idSlot, 1<<chunkBits))
		}
		i = t.n
		t.n++
		t.slot(i).set(1, 0, false)
	}
	s := t.slot(i)
	s.obj = obj
	s.set(s.gen(), k, true)
	return makeID(i, s.gen())
}

// find returns id's live slot; the caller holds t.mu.
func (t *idTable) find(id uint64) *idSlot {
	i := uint32(id&slotMask) - 1
	if uint64(i) >= uint64(t.n) {
		return nil
	}
	s := t.slot(i)
	if s.gen() != id>>slotBits || s.obj == nil {
		return nil
	}
	return s
}

// lookup returns id's live slot (a copy), or false; the caller need not lock.
func (t *idTable) lookup(id uint64) (idSlot, bool) {
	t.mu.RLock()
	s := t.find(id)
	if s == nil {
		t.mu.RUnlock()
		return idSlot{}, false
	}
	c := *s
	t.mu.RUnlock()
	return c, true
}

// get returns the object id names if it is live and of kind k.
func (t *idTable) get(id uint64, k kind) (any, bool) {
	s, ok := t.lookup(id)
	if !ok || s.kind() != k {
		return nil, false
	}
	return s.obj, true
}

// kindOf returns the kind of a live id, or 0.
func (t *idTable) kindOf(id uint64) kind {
	s, _ := t.lookup(id)
	return s.kind()
}

// take removes the host's reference from id, atomically: of any number of
// racing takes of one id, exactly one returns the object and true. The id
// stays live (the object may outlive the host's reference, as a future the
// loop still holds does); remove frees it.
func (t *idTable) take(id uint64) (any, bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	s := t.find(id)
	if s == nil || !s.host() {
		return nil, false
	}
	s.set(s.gen(), s.kind(), false)
	return s.obj, true
}

// idsOf returns the live ids of kind k whose object match accepts (a
// sweep, for when a loop is released; match runs under the read lock and
// must not touch the table).
func (t *idTable) idsOf(k kind, match func(obj any) bool) []uint64 {
	t.mu.RLock()
	defer t.mu.RUnlock()
	var out []uint64
	for i := uint32(0); i < t.n; i++ {
		if s := t.slot(i); s.obj != nil && s.kind() == k && match(s.obj) {
			out = append(out, makeID(i, s.gen()))
		}
	}
	return out
}

// kindReserved marks an id taken before its object exists (reserveID): no
// lookup of a real kind matches it.
const kindReserved kind = 255

// reserveID takes an id for an object about to be made, so that a constructor
// can fail for want of ids before it has done anything; fill or remove it.
// 0 when the table is full.
func (t *idTable) reserveID() uint64 { return t.add(kindReserved, kindReserved) }

// fill gives a reserved id its object and kind.
func (t *idTable) fill(id uint64, k kind, obj any) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if s := t.find(id); s != nil && s.kind() == kindReserved {
		s.obj = obj
		s.set(s.gen(), k, s.host())
	}
}

// remove frees id's slot; it reports whether id was live.
func (t *idTable) remove(id uint64) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	s := t.find(id)
	if s == nil {
		return false
	}
	gen := (s.gen() + 1) & genMask
	if gen == 0 {
		gen = 1
	}
	s.obj = nil
	s.set(gen, 0, false)
	t.free.push(uint32(id&slotMask) - 1)
	return true
}
