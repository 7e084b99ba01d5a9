// SPDX-License-Identifier: MIT

//go:build linux

package libloop

import (
	"unsafe"

	"golang.org/x/sys/unix"
)

// Datagrams in batches: recvmmsg and sendmmsg move up to udpBatch
// datagrams per system call (libuv's UV_UDP_RECVMMSG reads 20 at a time).

const (
	// udpBatch is the most datagrams one recvmmsg or sendmmsg moves.
	udpBatch = 32
	// udpSlot is what one received datagram may fill: UDP's largest
	// payload (65,507 bytes on IPv4, 65,527 on IPv6) fits, so a datagram
	// is never truncated, as with recvfrom into a 64 KiB chunk.
	udpSlot = 64 << 10
	// udpSlotStride spaces the slots by a little more than udpSlot, so the
	// heads of the slots do not all fall in the same cache set.
	udpSlotStride = udpSlot + 256
)

// mmsghdr is struct mmsghdr: Go pads it to the C size (64 bytes on 64-bit).
type mmsghdr struct {
	hdr unix.Msghdr
	n   uint32
}

// udpScratch is a loop's memory for batched datagram calls, made at the
// loop's first datagram read or batched send. The kernel writes each
// datagram into its own slot of stage, which is then copied into the
// loop's read buffer (a small copy next to the system call, and what lets
// every datagram up to 64 KiB arrive whole while the read buffer stays
// 256 KiB). stage is 2 MiB of address space; only the pages datagrams
// touch become resident.
type udpScratch struct {
	recv  [udpBatch]mmsghdr
	riov  [udpBatch]unix.Iovec
	names [udpBatch]unix.RawSockaddrAny
	stage []byte

	send [udpBatch]mmsghdr
	siov [udpBatch]unix.Iovec
}

func (l *Loop) udpScratch() *udpScratch {
	if l.io.udp == nil {
		u := &udpScratch{stage: make([]byte, udpBatch*udpSlotStride)}
		for i := range u.recv {
			u.riov[i].Base = &u.stage[i*udpSlotStride]
			u.riov[i].SetLen(udpSlot)
			u.recv[i].hdr.Iov = &u.riov[i]
			u.recv[i].hdr.SetIovlen(1)
			u.recv[i].hdr.Name = (*byte)(unsafe.Pointer(&u.names[i]))
			u.send[i].hdr.Iov = &u.siov[i]
			u.send[i].hdr.SetIovlen(1)
		}
		l.io.udp = u
	}
	return l.io.udp
}

// readDatagrams reads what is pending, up to maxDatagramsPerWake, with
// recvmmsg; each datagram and its sender's address go into the shared read
// buffer, so one readiness delivers them all in one batch.
func (t *Transport) readDatagrams() {
	l := t.loop
	u := l.udpScratch()
	for got := 0; got < maxDatagramsPerWake && t.IsReading(); {
		want := min(udpBatch, maxDatagramsPerWake-got)
		for i := range want {
			u.recv[i].hdr.Namelen = uint32(unsafe.Sizeof(u.names[0]))
		}
		r, _, e := unix.Syscall6(unix.SYS_RECVMMSG, uintptr(t.fd), uintptr(unsafe.Pointer(&u.recv[0])),
			uintptr(want), 0, 0, 0)
		if e == unix.EAGAIN || e == unix.EINTR {
			return
		}
		if e != 0 {
			// An ICMP error on a connected socket (ECONNREFUSED, ...);
			// recvmmsg reports one only before any datagram.
			l.emit(Event{Kind: ErrorReceived, Code: -int(e), FD: int(t.evFD), T: t})
			got++
			continue
		}
		n := int(r)
		// One room check for the batch when it fits (the common case):
		// each datagram then costs two copies and an event.
		need := 0
		for i := range n {
			need += int(u.recv[i].n) + 7 + int(u.recv[i].hdr.Namelen)
		}
		fits := len(l.io.rbuf)-l.io.rused >= need
		for i := range n {
			size := int(u.recv[i].n)
			if !fits {
				l.readChunk() // may deliver queued events first: stage is not in the read buffer
			}
			data := l.consume(size)
			copy(data, u.stage[i*udpSlotStride:i*udpSlotStride+size])
			alen := min(u.recv[i].hdr.Namelen, uint32(unsafe.Sizeof(u.names[0])))
			addr := l.consumeAddr(int(alen))
			copy(addr, unsafe.Slice((*byte)(unsafe.Pointer(&u.names[i])), alen))
			l.emit(Event{Kind: DatagramReceived, FD: int(t.evFD), T: t, Data: data, Addr: addr})
		}
		got += n
		if n < want {
			return // drained: a further call would only say EAGAIN
		}
	}
}

// sendDatagrams sends ds in order with sendmmsg and returns how many went
// and, when not all did, the error of ds[n], which was not sent.
func sendDatagrams(l *Loop, fd int, ds []OutDatagram) (int, error) {
	if len(ds) == 1 {
		if err := sendTo(fd, ds[0].Data, ds[0].Addr); err != nil {
			return 0, err
		}
		return 1, nil
	}
	u := l.udpScratch()
	sent := 0
	for sent < len(ds) {
		k := min(len(ds)-sent, udpBatch)
		for i := range k {
			d := &ds[sent+i]
			u.siov[i].Base = unsafe.SliceData(d.Data)
			u.siov[i].SetLen(len(d.Data))
			u.send[i].hdr.Name = unsafe.SliceData(d.Addr)
			u.send[i].hdr.Namelen = uint32(len(d.Addr))
		}
		r, _, e := unix.Syscall6(unix.SYS_SENDMMSG, uintptr(fd), uintptr(unsafe.Pointer(&u.send[0])), uintptr(k),
			unix.MSG_NOSIGNAL, 0, 0)
		for i := range k { // the scratch keeps no caller's memory alive
			u.siov[i].Base, u.send[i].hdr.Name = nil, nil
		}
		if e != 0 {
			return sent, e // the first one's own error
		}
		sent += int(r)
		if int(r) < k {
			// sendmmsg stops at a datagram that fails and, having sent
			// some, drops its error: send that one alone to learn it (or
			// that it would block).
			if err := sendTo(fd, ds[sent].Data, ds[sent].Addr); err != nil {
				return sent, err
			}
			sent++
		}
	}
	return sent, nil
}
