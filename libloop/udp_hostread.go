// SPDX-License-Identifier: MIT

package libloop

import "syscall"

// Datagrams read by the host. A host whose protocols are C functions
// (capi) can read a datagram transport's socket itself and call the
// protocol for each datagram as it reads it: no event is built, no byte
// copied into the shared read buffer, and no crossing besides the one
// that reads. Measured (callgrind, 64 B datagrams, one socket): the loop's
// own read and delivery cost ~500 instructions a datagram, a C loop
// around recvmmsg ~30.
//
// The loop decides when the host may: outside debug mode (which times
// every callback), for a transport whose events go to the host (no Go
// Protocol) and whose reads may be delivered now (ReadsDelivered), after
// the events queued before this readiness have been delivered, so that
// nothing overtakes them. The host stops at the first datagram its
// transport may no longer hear (its ReadWatcher was told, before any fd
// is closed) and hands that one and the rest it read to QueueDatagram,
// which queues them as the loop's own read would have: delivery then
// holds or drops them (withheld.go).

// DatagramReader is a Host that reads a datagram transport's pending
// datagrams and delivers them itself (above).
type DatagramReader interface {
	// ReadDatagrams reads up to max datagrams from t's fd and delivers
	// each to t's protocol in order, until t's ReadsDelivered turns false
	// or its protocol stops being the host's: the datagrams read and not
	// delivered go to t.QueueDatagram in order. It returns false if it
	// did not serve the readiness (then it read nothing and the loop
	// reads), and the error that ended reading, if any (EAGAIN is none).
	ReadDatagrams(t *Transport, max int) (served bool, err syscall.Errno)
}

// hostReadDatagrams lets the host serve t's readiness when the loop
// allows it (above); false: the loop reads.
func (t *Transport) hostReadDatagrams() bool {
	l := t.loop
	r := l.io.dgrams
	if r == nil || l.debug || t.proto != nil || !t.ReadsDelivered() {
		return false
	}
	if len(l.io.evq) > 0 {
		l.deliverQueued() // what was read before goes first
		if !t.ReadsDelivered() || t.proto != nil {
			return false
		}
	}
	served, err := r.ReadDatagrams(t, maxDatagramsPerWake)
	if !served {
		return false
	}
	if err != 0 {
		// An ICMP error on a connected socket (ECONNREFUSED, ...). What
		// waits behind it is read at the next poll, so nothing the host
		// delivers overtakes this event.
		l.emit(Event{Kind: ErrorReceived, Code: -int(err), FD: int(t.evFD), T: t})
	}
	return true
}

// QueueDatagram queues a datagram read for t as the loop's own read
// does: data and addr (a raw struct sockaddr) are copied into the shared
// read buffer and delivered with the loop's next events, or held or
// dropped if t may not hear them then. For a DatagramReader's datagrams
// it did not deliver; loop thread only.
func (t *Transport) QueueDatagram(data, addr []byte) {
	l := t.loop
	if len(data) > maxReadChunk || len(addr) > sockaddrReserve-8 {
		return // larger than any read makes
	}
	l.readChunk() // room for the largest datagram and its address
	d := l.consume(len(data))
	copy(d, data)
	a := l.consumeAddr(len(addr))
	copy(a, addr)
	l.emit(Event{Kind: DatagramReceived, FD: int(t.evFD), T: t, Data: d, Addr: a})
}

// EventFD is the FD its events carry (Event.FD): a process pipe's child
// fd, else -1.
func (t *Transport) EventFD() int { return int(t.evFD) }
