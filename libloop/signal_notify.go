// SPDX-License-Identifier: MIT

package libloop

import (
	"os"
	"os/signal"
	"sync"
	"syscall"
)

// ForwardSignals is for Go programs that use the core directly: it takes
// sigs with os/signal.Notify and runs the handler AddSignalHandler
// registered for each delivery on the loop thread, in a later iteration,
// as a host's signal pipe does. libloop.so never calls it: there the host
// owns the process's signals (see signal.go). Deliveries that come
// while the loop is busy queue up to 16 deep and the rest are dropped, as
// os/signal drops them. stop ends the forwarding (signal.Stop) and waits
// for the forwarding goroutine to exit; call it before closing the loop.
func (l *Loop) ForwardSignals(sigs ...os.Signal) (stop func(), err error) {
	if l.closed.Load() {
		return nil, ECLOSED
	}
	if len(sigs) == 0 {
		return nil, EINVAL
	}
	for _, s := range sigs {
		if n, ok := s.(syscall.Signal); !ok || n <= 0 || n >= 65 {
			return nil, EINVAL
		}
	}
	ch := make(chan os.Signal, 16)
	quit := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	signal.Notify(ch, sigs...)
	go func() {
		defer wg.Done()
		for {
			select {
			case s := <-ch:
				n := int(s.(syscall.Signal))
				l.CallSoonThreadsafe(func() {
					if h := l.signals.handlers[n]; h != nil && h.gofn != nil {
						h.gofn()
					}
				})
			case <-quit:
				return
			}
		}
	}()
	var once sync.Once
	return func() {
		once.Do(func() {
			signal.Stop(ch)
			close(quit)
			wg.Wait()
		})
	}, nil
}
