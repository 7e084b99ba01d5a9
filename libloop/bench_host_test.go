// SPDX-License-Identifier: MIT

package libloop

import "testing"

// nopHost runs host calls by doing nothing: the benchmarks below
// measure the loop's share of a host callback, not the host's.
type nopHost struct{ buf []HostCall }

func (d *nopHost) Buffer(n int) []HostCall {
	if cap(d.buf) < n {
		d.buf = make([]HostCall, n)
	}
	return d.buf[:n]
}

func (d *nopHost) Run(l *Loop, n int)        {}
func (d *nopHost) Call(l *Loop, fc HostCall) {}
func (d *nopHost) FutureDisposed(*Future)    {}

// nopBatch is a HostBatch that calls nothing; one record is queued again
// and again, as capi reuses none but allocates one per flushed C queue.
type nopBatch struct{ n int }

func (b *nopBatch) Run()     {}
func (b *nopBatch) Drop()    {}
func (b *nopBatch) Len() int { return b.n }

// BenchmarkCallSoonHostRun measures a handle-less host call_soon (capi's
// flush of a C call_soon) plus its share of running a batch of 256.
func BenchmarkCallSoonHostRun(b *testing.B) {
	l, _ := New()
	defer l.Close()
	l.SetHost(&nopHost{})
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		l.CallSoonHost(HostCall{Fn: 1, Arg: uintptr(i)}, false)
		if i&255 == 255 {
			l.RunOnce(true)
		}
	}
	l.RunOnce(true)
}

// BenchmarkCallSoonHostBatchRun measures queueing a host batch and running
// it in the next iteration.
func BenchmarkCallSoonHostBatchRun(b *testing.B) {
	l, _ := New()
	defer l.Close()
	l.SetHost(&nopHost{})
	batch := &nopBatch{n: 64}
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		l.CallSoonHostBatch(batch)
		l.RunOnce(true)
	}
}

// BenchmarkSleepCancel measures a Sleep future with a timer, cancelled and
// released: the sleep's own state.
func BenchmarkSleepCancel(b *testing.B) {
	l, _ := New()
	defer l.Close()
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		f, _ := l.Sleep(10)
		f.Cancel("")
		f.Release()
		l.RunOnce(true)
	}
}

// BenchmarkGather2 measures a gather of two futures finished at once.
func BenchmarkGather2(b *testing.B) {
	l, _ := New()
	defer l.Close()
	kids := make([]*Future, 2)
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		kids[0], _ = l.NewFuture()
		kids[1], _ = l.NewFuture()
		g, _ := l.Gather(kids, false)
		kids[0].SetResult(1, nil)
		kids[1].SetResult(2, nil)
		l.RunUntilComplete(g)
		g.Release()
		kids[0].Release()
		kids[1].Release()
	}
}

// BenchmarkRunInExecutor measures one executor job's round trip.
func BenchmarkRunInExecutor(b *testing.B) {
	l, _ := New()
	defer l.Close()
	work := func() (uintptr, int) { return 1, 0 }
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		f, _ := l.RunInExecutor(work)
		l.RunUntilComplete(f)
		f.Release()
	}
}
