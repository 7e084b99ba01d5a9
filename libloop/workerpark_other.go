// SPDX-License-Identifier: MIT

//go:build !linux

package libloop

import "sync"

// parkWord is a sync.Cond where the OS has no futex.
type parkWord struct {
	cond *sync.Cond
}

func (p *workerPark) parkInit(mu *sync.Mutex) { p.cond = sync.NewCond(mu) }

func (p *workerPark) wait()          { p.cond.Wait() }
func (p *workerPark) prepareSignal() {}
func (p *workerPark) signal()        { p.cond.Signal() } // safe without the lock too
func (p *workerPark) broadcast()     { p.cond.Broadcast() }
