// SPDX-License-Identifier: MIT

package libloop

import (
	"context"
	"net"
	"syscall"
	"time"

	"github.com/libloop/libloop/internal/packetconn"
)

// PacketConn is a net.PacketConn over a datagram transport (OpenUDP), for
// goroutines other than the loop's, as Conn is for a stream: ReadFrom
// blocks until a datagram arrives, WriteTo posts one to the loop thread. A
// goroutine must be running the loop (RunForever) while it is used.
//
// Receiving: datagrams wait in a queue of at most 256 datagrams or 1 MiB.
// When it is full the transport's reading is paused, so later datagrams
// wait in the socket's receive buffer (and, once that is full, the kernel
// drops them, exactly as it does for a net.UDPConn whose reader falls
// behind); ReadFrom resumes reading once it has taken the queue down to
// half. The PacketConn itself never drops a datagram it has received.
//
// Sending: WriteTo copies the datagram and returns; at most 256 KiB are on
// their way to the transport, and WriteTo waits while the transport is
// above its high-water mark. A send the kernel refuses later (asyncio's
// error_received: EMSGSIZE, ENETUNREACH...) is returned by the next
// WriteTo. Deadlines, Close and the loop's Close unblock waiting calls, as
// net.PacketConn requires. The state machine is internal/packetconn's,
// shared with the purego binding's PacketConn.
type PacketConn struct {
	s packetconn.Conn
}

// ListenPacket opens a datagram socket bound to address ("udp", "udp4",
// "udp6": "host:port", port 0 for any; an empty host is the wildcard of
// the network's family, 0.0.0.0 for "udp" and "udp4", :: for "udp6") and
// returns a PacketConn, as net.ListenPacket. A name is resolved on the
// resolver pool. Call it from a goroutine other than the one running the
// loop, as DialConn.
func (l *Loop) ListenPacket(network, address string) (*PacketConn, error) {
	host, port, err := packetconn.ListenAddress(network, address)
	if err != nil {
		return nil, err
	}
	pc := &PacketConn{}
	pc.s.Init(streamLoop{l}, network)
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
	opErr := func(err error) error { return &net.OpError{Op: "listen", Net: network, Err: err} }
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
	var local *net.UDPAddr
	if raw, err := t.SockName(); err == nil {
		local = packetconn.RawToUDPAddr(raw)
	}
	pc.s.Attach(t, local)
}

// protocol receives the transport's events on the loop thread.
func (pc *PacketConn) protocol(ev *Event) bool {
	switch ev.Kind {
	case DatagramReceived:
		pc.s.Datagram(ev.Data, packetconn.RawToUDPAddr(ev.Addr))
	case ErrorReceived:
		pc.s.SendFailed(codeError(ev.Code))
	case ConnectionLost:
		var err error
		if ev.Code != 0 {
			err = codeError(ev.Code)
		}
		pc.s.Lost(err)
	case PauseWriting, ResumeWriting:
		pc.s.SetWritePaused(ev.Kind == PauseWriting)
	}
	return false
}

// codeError turns an event's code into an error: a system error as the
// syscall.Errno the net package would return, a library code as an Errno.
func codeError(code int) error {
	if _, _, ok := errnoText(Errno(code)); !ok && code < 0 && code > -4096 {
		return syscall.Errno(-code)
	}
	return Errno(code)
}

// ReadFrom reads the next datagram into p and returns its length and
// sender, blocking until one arrives, the read deadline passes (an error
// whose Timeout() is true), pc is closed or the loop is. A datagram longer
// than p is cut to len(p), and the rest of it is lost, as a UDP socket's
// read does.
func (pc *PacketConn) ReadFrom(p []byte) (int, net.Addr, error) { return pc.s.ReadFrom(p) }

// WriteTo sends p as one datagram to addr, a *net.UDPAddr (anything else
// is EINVAL, as for a net.UDPConn). It returns len(p) once the datagram is
// posted to the loop, blocking while 256 KiB are on their way or the
// transport is above its high-water mark; or the error that stopped it:
// the write deadline, Close, a closed loop, a datagram longer than 65535
// bytes (EMSGSIZE), or the error of an earlier datagram the kernel
// refused.
func (pc *PacketConn) WriteTo(p []byte, addr net.Addr) (int, error) { return pc.s.WriteTo(p, addr) }

// Close closes the socket: calls waiting on pc return net.ErrClosed, and
// datagrams already posted are sent first (asyncio's close). Closing twice
// returns an error.
func (pc *PacketConn) Close() error { return pc.s.Close() }

// LocalAddr returns the bound address (*net.UDPAddr; the port chosen for
// port 0).
func (pc *PacketConn) LocalAddr() net.Addr { return pc.s.LocalAddr() }

// SetDeadline sets the read and write deadlines (zero: none).
func (pc *PacketConn) SetDeadline(t time.Time) error { return pc.s.SetDeadline(t) }

// SetReadDeadline sets the deadline of pending and future ReadFroms.
func (pc *PacketConn) SetReadDeadline(t time.Time) error { return pc.s.SetReadDeadline(t) }

// SetWriteDeadline sets the deadline of pending and future WriteTos.
func (pc *PacketConn) SetWriteDeadline(t time.Time) error { return pc.s.SetWriteDeadline(t) }

var _ net.PacketConn = (*PacketConn)(nil)
