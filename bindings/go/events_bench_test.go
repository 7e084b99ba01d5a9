// SPDX-License-Identifier: MIT

package libloop

import (
	"testing"

	"golang.org/x/sys/unix"
)

// BenchmarkEventDelivery compares the two ways events reach Go: the batch
// sink (one crossing per delivery) and the protocol trampoline (one per
// event). Each op: 64 socketpairs get one byte each, then one loop
// iteration delivers 64 DataReceived events. The difference between the
// two is the crossings saved; see the comment at the top of events.go.
func BenchmarkEventDelivery(b *testing.B) {
	for _, mode := range []struct {
		name     string
		perEvent bool
	}{{"batch", false}, {"per-event", true}} {
		b.Run(mode.name, func(b *testing.B) {
			perEventDelivery = mode.perEvent
			defer func() { perEventDelivery = false }()
			lib, err := Open()
			if err != nil {
				b.Skip(err)
			}
			l, err := lib.NewLoop()
			if err != nil {
				b.Fatal(err)
			}
			defer l.Release()
			const pairs = 64
			got := 0
			p := &ProtocolFuncs{Data: func(_ *Transport, d []byte) { got += len(d) }}
			var peers [pairs]int
			for i := range peers {
				// (no SOCK_NONBLOCK flag: macOS has none; set afterwards)
				fds, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_STREAM, 0)
				if err != nil {
					b.Fatal(err)
				}
				for _, fd := range fds {
					unix.CloseOnExec(fd)
					if err := unix.SetNonblock(fd, true); err != nil {
						b.Fatal(err)
					}
				}
				if _, err := l.OpenTransport(fds[0], KindStream, p); err != nil {
					b.Fatal(err)
				}
				peers[i] = fds[1]
				defer unix.Close(fds[1])
			}
			l.RunOnce(true) // ConnectionMade
			one := []byte{1}
			b.ResetTimer()
			for range b.N {
				b.StopTimer() // time the delivery, not the peers' writes
				for _, fd := range peers {
					unix.Write(fd, one)
				}
				b.StartTimer()
				l.RunOnce(false)
			}
			b.StopTimer()
			if got < b.N*pairs/2 {
				b.Fatalf("%d bytes delivered for %d ops", got, b.N)
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(got), "ns/event")
		})
	}
}
