// SPDX-License-Identifier: MIT

package libloop

import (
	"context"
	"net"
	"net/netip"
	"os"
	"sync"
	"syscall"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/libloop/libloop/internal/streamconn"
)

// PacketConn is a net.PacketConn over a datagram transport (OpenUDP), for
// goroutines other than the loop's, as Conn is for a stream: ReadFrom
// blocks until a datagram arrives, WriteTo posts one to the loop thread. A
// goroutine must be running the loop (RunForever) while it is used.
//
// Receiving: datagrams wait in a queue of at most packetQueueMax datagrams
// or packetQueueBytes bytes. When it is full the transport's reading is
// paused, so later datagrams wait in the socket's receive buffer (and, once
// that is full, the kernel drops them, exactly as it does for a
// net.UDPConn whose reader falls behind); ReadFrom resumes reading once it
// has taken the queue down to half. The PacketConn itself never drops a
// datagram it has received.
//
// Sending: WriteTo copies the datagram and returns; at most packetWriteHigh
// bytes are on their way to the transport, and WriteTo waits while the
// transport is above its high-water mark. A send the kernel refuses later
// (asyncio's error_received: EMSGSIZE, ENETUNREACH...) is returned by the
// next WriteTo. Deadlines, Close and the loop's Close unblock waiting
// calls, as net.PacketConn requires.
type PacketConn struct {
	w       streamconn.Waits // lock, deadlines, Close's flag, waiting
	loop    *Loop
	t       *Transport // loop thread only
	network string
	local   net.Addr
	v6      bool // an IPv6 socket: IPv4 peers are sent to as ::ffff:a.b.c.d

	readMu  sync.Mutex // one ReadFrom at a time
	writeMu sync.Mutex // one WriteTo at a time: datagrams keep their order

	queue  []packet // received, unread (under w.Mu)
	qhead  int      // queue[qhead:] is unread
	qbytes int      // bytes in queue[qhead:]
	// readPaused: the transport's reading is paused for a full queue.
	readPaused   bool
	resumePosted bool
	lost         bool  // ConnectionLost came
	lostErr      error // its error, nil for a clean close
	sendErr      error // a send the kernel refused, for the next WriteTo
	posted       int   // bytes posted to the loop, not yet given to the transport
	writePaused  bool  // the transport is above its high-water mark
}

// packet is one received datagram.
type packet struct {
	data []byte
	from *net.UDPAddr
}

// Bounds of a PacketConn's queues (see PacketConn).
const (
	packetQueueMax   = 256
	packetQueueBytes = 1 << 20
	packetWriteHigh  = 256 << 10
	maxUDPDatagram   = 65535 // larger never fits a UDP length field
)

// ListenPacket opens a datagram socket bound to address ("udp", "udp4",
// "udp6": "host:port", port 0 for any; an empty host is the wildcard of
// the network's family, 0.0.0.0 for "udp" and "udp4", :: for "udp6") and
// returns a PacketConn, as net.ListenPacket. A name is resolved on the
// resolver pool. Call it from a goroutine other than the one running the
// loop, as DialConn.
func (l *Loop) ListenPacket(network, address string) (*PacketConn, error) {
	opErr := func(err error) error { return &net.OpError{Op: "listen", Net: network, Err: err} }
	switch network {
	case "udp", "udp4", "udp6":
	default:
		return nil, opErr(net.UnknownNetworkError(network))
	}
	host, port, err := streamconn.SplitPort(network, address)
	if err != nil {
		return nil, opErr(err)
	}
	if host == "" {
		host = "0.0.0.0"
		if network == "udp6" {
			host = "::"
		}
	}
	pc := &PacketConn{loop: l, network: network}
	pc.w.Init(streamLoop{l})
	var openErr error
	r := newRendezvous()
	start := func() {
		err := l.OpenUDPWith(UDPOptions{LocalHost: host, LocalPort: port}, pc.protocol, func(t *Transport, err error) {
			if t != nil {
				pc.attach(t)
			}
			if !r.complete(func() { openErr = err }) && t != nil {
				t.Abort() // the caller gave up: nobody will use it
			}
		})
		if err != nil {
			r.complete(func() { openErr = err })
		}
	}
	if err := l.await(context.Background(), r, start, nil); err != nil {
		return nil, opErr(err)
	}
	if openErr != nil {
		return nil, opErr(openErr)
	}
	return pc, nil
}

// attach binds pc to its transport and reads its address (loop thread).
func (pc *PacketConn) attach(t *Transport) {
	pc.t = t
	pc.local = &net.UDPAddr{}
	if raw, err := t.SockName(); err == nil {
		if a := rawToUDPAddr(raw); a != nil {
			pc.local = a
			pc.v6 = a.IP.To4() == nil
		}
	}
}

// protocol receives the transport's events on the loop thread.
func (pc *PacketConn) protocol(ev *Event) bool {
	switch ev.Kind {
	case DatagramReceived:
		p := packet{data: append([]byte(nil), ev.Data...), from: rawToUDPAddr(ev.Addr)}
		pc.w.Mu.Lock()
		if pc.qhead > 0 && 2*pc.qhead >= len(pc.queue) {
			// Move the unread half down, as Conn's read buffer does.
			n := copy(pc.queue, pc.queue[pc.qhead:])
			clear(pc.queue[n:])
			pc.queue, pc.qhead = pc.queue[:n], 0
		}
		pc.queue = append(pc.queue, p)
		pc.qbytes += len(p.data)
		pause := !pc.readPaused && pc.full()
		if pause {
			pc.readPaused = true
		}
		pc.w.Broadcast()
		pc.w.Mu.Unlock()
		if pause {
			ev.T.PauseReading()
		}
	case ErrorReceived:
		pc.w.Mu.Lock()
		if pc.sendErr == nil {
			pc.sendErr = codeError(ev.Code)
		}
		pc.w.Broadcast()
		pc.w.Mu.Unlock()
	case ConnectionLost:
		pc.w.Mu.Lock()
		pc.lost = true
		if ev.Code != 0 {
			pc.lostErr = codeError(ev.Code)
		}
		pc.writePaused = false
		pc.w.Broadcast()
		pc.w.Mu.Unlock()
	case PauseWriting, ResumeWriting:
		pc.w.Mu.Lock()
		pc.writePaused = ev.Kind == PauseWriting
		pc.w.Broadcast()
		pc.w.Mu.Unlock()
	}
	return false
}

// full reports whether the receive queue reached a bound; pc.w.Mu is held.
func (pc *PacketConn) full() bool {
	return len(pc.queue)-pc.qhead >= packetQueueMax || pc.qbytes >= packetQueueBytes
}

// drained reports whether ReadFrom took the queue down to half of both
// bounds, when a paused transport reads again; pc.w.Mu is held.
func (pc *PacketConn) drained() bool {
	return len(pc.queue)-pc.qhead <= packetQueueMax/2 && pc.qbytes <= packetQueueBytes/2
}

// resume runs on the loop thread once ReadFrom has drained the queue.
func (pc *PacketConn) resume() {
	pc.w.Mu.Lock()
	pc.resumePosted = false
	do := pc.readPaused && !pc.lost && pc.drained()
	if do {
		pc.readPaused = false
	}
	pc.w.Mu.Unlock()
	if do {
		pc.t.ResumeReading()
	}
}

// codeError turns an event's code into an error: a system error as the
// syscall.Errno the net package would return, a library code as an Errno.
func codeError(code int) error {
	if _, _, ok := errnoText(Errno(code)); !ok && code < 0 && code > -4096 {
		return syscall.Errno(-code)
	}
	return Errno(code)
}

// opError wraps err as the net package does for a PacketConn's calls.
func (pc *PacketConn) opError(op string, addr net.Addr, err error) error {
	return &net.OpError{Op: op, Net: pc.network, Source: pc.local, Addr: addr, Err: err}
}

// ReadFrom reads the next datagram into p and returns its length and
// sender, blocking until one arrives, the read deadline passes (an error
// whose Timeout() is true), pc is closed or the loop is. A datagram longer
// than p is cut to len(p), and the rest of it is lost, as a UDP socket's
// read does.
func (pc *PacketConn) ReadFrom(p []byte) (int, net.Addr, error) {
	pc.readMu.Lock()
	defer pc.readMu.Unlock()
	pc.w.Mu.Lock()
	defer pc.w.Mu.Unlock()
	for {
		switch {
		case pc.w.Closed || pc.loop.IsClosed():
			return 0, nil, pc.opError("read", nil, net.ErrClosed)
		case streamconn.Expired(pc.w.ReadDL):
			return 0, nil, pc.opError("read", nil, os.ErrDeadlineExceeded)
		case pc.qhead < len(pc.queue):
			d := pc.queue[pc.qhead]
			pc.queue[pc.qhead] = packet{}
			pc.qhead++
			pc.qbytes -= len(d.data)
			if pc.qhead == len(pc.queue) {
				pc.queue, pc.qhead = pc.queue[:0], 0
			}
			if pc.readPaused && !pc.resumePosted && pc.drained() {
				pc.resumePosted = pc.loop.CallSoonThreadsafe(pc.resume) == nil
			}
			return copy(p, d.data), d.from, nil
		case pc.lost:
			err := pc.lostErr
			if err == nil {
				err = net.ErrClosed
			}
			return 0, nil, pc.opError("read", nil, err)
		}
		pc.w.Wait(pc.w.ReadDL)
	}
}

// WriteTo sends p as one datagram to addr, a *net.UDPAddr (anything else
// is EINVAL, as for a net.UDPConn). It returns len(p) once the datagram is
// posted to the loop, blocking while packetWriteHigh bytes are on their
// way or the transport is above its high-water mark; or the error that
// stopped it: the write deadline, Close, a closed loop, a datagram longer
// than 65535 bytes (EMSGSIZE), or the error of an earlier datagram the
// kernel refused.
func (pc *PacketConn) WriteTo(p []byte, addr net.Addr) (int, error) {
	ua, ok := addr.(*net.UDPAddr)
	if !ok || ua == nil {
		return 0, pc.opError("write", addr, syscall.EINVAL)
	}
	raw, err := udpAddrToRaw(ua, pc.v6)
	if err != nil {
		return 0, pc.opError("write", addr, err)
	}
	if len(p) > maxUDPDatagram {
		return 0, pc.opError("write", addr, syscall.EMSGSIZE)
	}
	pc.writeMu.Lock()
	defer pc.writeMu.Unlock()
	pc.w.Mu.Lock()
	defer pc.w.Mu.Unlock()
	for {
		switch {
		case pc.w.Closed || pc.loop.IsClosed():
			return 0, pc.opError("write", addr, net.ErrClosed)
		case streamconn.Expired(pc.w.WriteDL):
			return 0, pc.opError("write", addr, os.ErrDeadlineExceeded)
		case pc.sendErr != nil:
			err := pc.sendErr
			pc.sendErr = nil
			return 0, pc.opError("write", addr, err)
		case pc.lost:
			return 0, pc.opError("write", addr, net.ErrClosed)
		case pc.writePaused || pc.posted >= packetWriteHigh:
			pc.w.Wait(pc.w.WriteDL)
			continue
		}
		d := append([]byte(nil), p...)
		if err := pc.loop.CallSoonThreadsafe(func() { pc.sendOnLoop(d, raw) }); err != nil {
			return 0, pc.opError("write", addr, net.ErrClosed)
		}
		pc.posted += len(d)
		return len(p), nil
	}
}

// sendOnLoop gives one datagram to the transport (loop thread).
func (pc *PacketConn) sendOnLoop(d, addr []byte) {
	err := pc.t.SendTo(d, addr)
	paused := pc.t.WritePaused()
	pc.w.Mu.Lock()
	pc.posted -= len(d)
	if err != nil && pc.sendErr == nil && !pc.lost && !pc.w.Closed {
		pc.sendErr = err
	}
	pc.writePaused = paused && !pc.lost
	pc.w.Broadcast()
	pc.w.Mu.Unlock()
}

// Close closes the socket: calls waiting on pc return net.ErrClosed, and
// datagrams already posted are sent first (asyncio's close). Closing twice
// returns an error.
func (pc *PacketConn) Close() error {
	pc.w.Mu.Lock()
	if pc.w.Closed {
		pc.w.Mu.Unlock()
		return pc.opError("close", nil, net.ErrClosed)
	}
	pc.w.Closed = true
	pc.w.Broadcast()
	pc.w.Mu.Unlock()
	pc.loop.CallSoonThreadsafe(func() { pc.t.Close() })
	return nil
}

// LocalAddr returns the bound address (*net.UDPAddr; the port chosen for
// port 0).
func (pc *PacketConn) LocalAddr() net.Addr { return pc.local }

// SetDeadline sets the read and write deadlines (zero: none).
func (pc *PacketConn) SetDeadline(t time.Time) error { return pc.setDeadline(t, true, true) }

// SetReadDeadline sets the deadline of pending and future ReadFroms.
func (pc *PacketConn) SetReadDeadline(t time.Time) error { return pc.setDeadline(t, true, false) }

// SetWriteDeadline sets the deadline of pending and future WriteTos.
func (pc *PacketConn) SetWriteDeadline(t time.Time) error { return pc.setDeadline(t, false, true) }

func (pc *PacketConn) setDeadline(t time.Time, read, write bool) error {
	if !pc.w.SetDeadline(t, read, write) {
		return pc.opError("set", nil, net.ErrClosed)
	}
	return nil
}

// rawToUDPAddr decodes a raw inet sockaddr (a datagram's sender), or nil
// for anything else.
func rawToUDPAddr(raw []byte) *net.UDPAddr {
	var rsa unix.RawSockaddrAny
	n := copy(unsafe.Slice((*byte)(unsafe.Pointer(&rsa)), unsafe.Sizeof(rsa)), raw)
	switch {
	case rsa.Addr.Family == unix.AF_INET && n >= unix.SizeofSockaddrInet4:
		sa := (*unix.RawSockaddrInet4)(unsafe.Pointer(&rsa))
		return &net.UDPAddr{IP: net.IP(append([]byte(nil), sa.Addr[:]...)), Port: netPort(&sa.Port)}
	case rsa.Addr.Family == unix.AF_INET6 && n >= unix.SizeofSockaddrInet6:
		sa := (*unix.RawSockaddrInet6)(unsafe.Pointer(&rsa))
		a := &net.UDPAddr{IP: net.IP(append([]byte(nil), sa.Addr[:]...)), Port: netPort(&sa.Port)}
		if sa.Scope_id != 0 {
			if ifi, err := net.InterfaceByIndex(int(sa.Scope_id)); err == nil {
				a.Zone = ifi.Name
			}
		}
		return a
	}
	return nil
}

// netPort reads a port stored in network byte order.
func netPort(p *uint16) int {
	b := (*[2]byte)(unsafe.Pointer(p))
	return int(b[0])<<8 | int(b[1])
}

// udpAddrToRaw encodes a as a raw sockaddr for SendTo from a socket of
// the family v6 says: on an IPv4 socket an IPv4 address (or an IPv4-mapped
// IPv6 one) as sockaddr_in; else sockaddr_in6, an IPv4 address mapped (a
// zone names the interface). A port outside 0..65535, an IP of no valid
// length or an unknown zone is EINVAL.
func udpAddrToRaw(a *net.UDPAddr, v6 bool) ([]byte, error) {
	ip, ok := netip.AddrFromSlice(a.IP)
	if !ok || !validPort(a.Port) {
		return nil, syscall.EINVAL
	}
	ip = ip.Unmap()
	port := [2]byte{byte(a.Port >> 8), byte(a.Port)}
	if ip.Is4() && !v6 {
		sa := newRawInet4()
		*(*[2]byte)(unsafe.Pointer(&sa.Port)) = port
		sa.Addr = ip.As4()
		return append([]byte(nil), unsafe.Slice((*byte)(unsafe.Pointer(&sa)), unsafe.Sizeof(sa))...), nil
	}
	sa := newRawInet6()
	*(*[2]byte)(unsafe.Pointer(&sa.Port)) = port
	sa.Addr = ip.As16()
	if a.Zone != "" {
		ifi, err := net.InterfaceByName(a.Zone)
		if err != nil {
			return nil, syscall.EINVAL
		}
		sa.Scope_id = uint32(ifi.Index)
	}
	return append([]byte(nil), unsafe.Slice((*byte)(unsafe.Pointer(&sa)), unsafe.Sizeof(sa))...), nil
}

var _ net.PacketConn = (*PacketConn)(nil)
