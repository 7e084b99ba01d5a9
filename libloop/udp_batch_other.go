// SPDX-License-Identifier: MIT

//go:build !linux

package libloop

import (
	"unsafe"

	"golang.org/x/sys/unix"
)

// Without recvmmsg and sendmmsg (darwin; the BSDs' are left for later):
// one system call per datagram, the batch kept for delivery (every
// datagram of one readiness still reaches the host in one crossing).

// udpScratch is a loop's memory for datagram calls: here only the sender
// address of the datagram being read.
type udpScratch struct {
	name unix.RawSockaddrAny
}

func (l *Loop) udpScratch() *udpScratch {
	if l.io.udp == nil {
		l.io.udp = &udpScratch{}
	}
	return l.io.udp
}

// readDatagrams reads what is pending, up to maxDatagramsPerWake; each
// datagram and its sender's address go into the shared read buffer.
func (t *Transport) readDatagrams() {
	l := t.loop
	rsa := &l.udpScratch().name
	for i := 0; i < maxDatagramsPerWake && t.IsReading(); i++ {
		buf := l.readChunk()
		alen := uint32(unsafe.Sizeof(*rsa))
		r, _, e := unix.Syscall6(unix.SYS_RECVFROM, uintptr(t.fd), uintptr(unsafe.Pointer(unsafe.SliceData(buf))),
			uintptr(len(buf)), 0, uintptr(unsafe.Pointer(rsa)), uintptr(unsafe.Pointer(&alen)))
		if e == unix.EAGAIN || e == unix.EINTR {
			return
		}
		if e != 0 {
			// An ICMP error on a connected socket (ECONNREFUSED, ...).
			l.emit(Event{Kind: ErrorReceived, Code: -int(e), FD: int(t.evFD), T: t})
			continue
		}
		data := l.consume(int(r))
		alen = min(alen, uint32(unsafe.Sizeof(*rsa)))
		addr := l.consumeAddr(int(alen))
		copy(addr, unsafe.Slice((*byte)(unsafe.Pointer(rsa)), alen))
		l.emit(Event{Kind: DatagramReceived, FD: int(t.evFD), T: t, Data: data, Addr: addr})
	}
}

// sendDatagrams sends ds in order, one sendto each, and returns how many
// went and, when not all did, the error of ds[n], which was not sent.
func sendDatagrams(_ *Loop, fd int, ds []OutDatagram) (int, error) {
	for i := range ds {
		if err := sendTo(fd, ds[i].Data, ds[i].Addr); err != nil {
			return i, err
		}
	}
	return len(ds), nil
}
