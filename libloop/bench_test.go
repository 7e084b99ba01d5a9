// SPDX-License-Identifier: MIT

package libloop

import "testing"

// BenchmarkTaskSleep0Step measures one task step that awaits a zero-delay
// sleep, the core's share of the C task benchmark.
func BenchmarkTaskSleep0Step(b *testing.B) {
	l, _ := New()
	defer l.Close()
	n := 0
	task, _ := l.NewTask(func(t *Task) {
		if n >= b.N {
			t.Return(0, nil)
			return
		}
		n++
		f, _ := l.Sleep(0)
		t.Await(f)
		f.Release()
	})
	b.ReportAllocs()
	b.ResetTimer()
	l.RunUntilComplete(&task.Future)
}

// BenchmarkTaskYieldStep measures one bare-yield task step.
func BenchmarkTaskYieldStep(b *testing.B) {
	l, _ := New()
	defer l.Close()
	n := 0
	task, _ := l.NewTask(func(t *Task) {
		if n >= b.N {
			t.Return(0, nil)
			return
		}
		n++
		t.Yield()
	})
	b.ReportAllocs()
	b.ResetTimer()
	l.RunUntilComplete(&task.Future)
}

// BenchmarkCallSoonRun measures call_soon plus running it (the core's share of a chain of callbacks).
func BenchmarkCallSoonRun(b *testing.B) {
	l, _ := New()
	defer l.Close()
	fn := func() {}
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		l.CallSoon(fn)
		l.RunOnce(true)
	}
}
