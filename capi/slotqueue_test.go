// SPDX-License-Identifier: MIT

package main

import (
	"math/rand"
	"testing"
)

// The ring hands slots back in the order they were freed (FIFO), across any
// interleaving of pushes and pops and through its growth.
func TestSlotQueueIsFIFO(t *testing.T) {
	r := rand.New(rand.NewSource(7))
	var q slotQueue
	var model []uint32
	next := uint32(0)
	for i := 0; i < 100000; i++ {
		if len(model) > 0 && r.Intn(5) < 2 {
			got, want := q.pop(), model[0]
			model = model[1:]
			if got != want {
				t.Fatalf("step %d: pop %d, want %d", i, got, want)
			}
		} else {
			q.push(next)
			model = append(model, next)
			next++
		}
		if q.len() != len(model) {
			t.Fatalf("step %d: len %d, want %d", i, q.len(), len(model))
		}
	}
}
