// SPDX-License-Identifier: MIT

package libloop

import (
	"testing"
	"unsafe"
)

// ChainView's layout is a contract with runners in other languages
// (capi/cloop/cloop.h's ll__chain_view, version 1): a change here needs a
// new ChainViewVersion and the same change there.
func TestChainViewLayout(t *testing.T) {
	var v ChainView
	got := [5]uintptr{unsafe.Offsetof(v.Version), unsafe.Offsetof(v.Posted), unsafe.Offsetof(v.Changes),
		unsafe.Offsetof(v.ReadyLen), unsafe.Sizeof(v)}
	if want := [5]uintptr{0, 4, 8, 16, 24}; got != want || ChainViewVersion != 1 {
		t.Fatalf("ChainView version %d offsets and size %v, want version 1 and %v", ChainViewVersion, got, want)
	}
}

// The view is the loop's own counters: current without anyone copying.
func TestChainViewIsCurrent(t *testing.T) {
	l, err := New()
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	v := l.view()
	if v.Version != ChainViewVersion {
		t.Fatalf("version %d", v.Version)
	}
	changes := v.Changes
	h, err := l.CallSoon(func() {})
	if err != nil {
		t.Fatal(err)
	}
	if v.ReadyLen != 1 || v.Changes == changes {
		t.Fatalf("after CallSoon: ReadyLen %d, Changes %d (was %d)", v.ReadyLen, v.Changes, changes)
	}
	h.Cancel()
	if err := l.CallSoonThreadsafe(func() {}); err != nil {
		t.Fatal(err)
	}
	if v.Posted.Load() != 1 {
		t.Fatalf("after CallSoonThreadsafe: Posted %d", v.Posted.Load())
	}
	if err := l.RunOnce(true); err != nil {
		t.Fatal(err)
	}
	if v.ReadyLen != 0 || v.Posted.Load() != 0 {
		t.Fatalf("after an iteration: ReadyLen %d, Posted %d", v.ReadyLen, v.Posted.Load())
	}
}
