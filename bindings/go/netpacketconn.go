// SPDX-License-Identifier: MIT

package libloop

import (
	"context"
	"net"
	"syscall"
	"time"

	"github.com/libloop/libloop/internal/packetconn"
)

// PacketConn is a net.PacketConn over a UDP Transport, for goroutines
// other than the one running the loop, as the core's PacketConn (and as
// Conn is for a stream): ReadFrom blocks until a datagram arrives,
// WriteTo posts one to the loop thread (CallSoonThreadsafe). A goroutine
// must be running the loop (go loop.RunForever()) while it is used, and
// its methods must not be called from the loop's own callbacks.
//
// The state machine is internal/packetconn's, shared with the core:
// received datagrams wait in a queue of at most 256 (or 1 MiB); then the
// transport's reading is paused, so later ones wait in the socket's
// receive buffer (and the kernel drops them once it is full, as for a
// net.UDPConn whose reader falls behind), and ReadFrom resumes reading
// once it has taken the queue down to half. WriteTo copies the datagram
// and returns, with at most 256 KiB on the way to the transport and
// nothing more between its PauseWriting and ResumeWriting; a send the
// kernel refuses later (EMSGSIZE, ENETUNREACH: asyncio's error_received)
// is returned, as a syscall.Errno, by the next WriteTo. Deadlines, Close
// and the loop's close unblock waiting calls.
type PacketConn struct {
	s packetconn.Conn
}

// ListenPacket opens a UDP socket bound to address ("udp", "udp4",
// "udp6": "host:port", port 0 for any; an empty host is the wildcard of
// the network's family, 0.0.0.0 for "udp" and "udp4", :: for "udp6") and
// returns a PacketConn, as net.ListenPacket. A name is resolved off the
// loop thread (OpenUDPWith). Call it from a goroutine other than the one
// running the loop. Errors are *net.OpError with Op "listen".
func (l *Loop) ListenPacket(network, address string) (*PacketConn, error) {
	host, port, err := packetconn.ListenAddress(network, address)
	if err != nil {
		return nil, err
	}
	pc := &PacketConn{}
	pc.s.Init(streamLoop{l}, network)
	_, err = l.openFor(context.Background(), func() (*DialFuture, error) {
		return l.OpenUDPWith(UDPOptions{LocalHost: host, LocalPort: port}, packetProtocol{pc})
	})
	if err != nil {
		return nil, &net.OpError{Op: "listen", Net: network, Err: err}
	}
	return pc, nil
}

// packetTransport is a UDP Transport as internal/packetconn calls it.
type packetTransport struct{ t *Transport }

// SendTo sends one datagram to a raw struct sockaddr.
func (p packetTransport) SendTo(data, sockaddr []byte) error {
	return errnoOf(p.t.SendToRaw(data, sockaddr))
}

// Close closes the transport once what is queued is sent.
func (p packetTransport) Close() error { return p.t.Close() }

// PauseReading stops the datagrams' delivery.
func (p packetTransport) PauseReading() error { return p.t.PauseReading() }

// ResumeReading restarts it.
func (p packetTransport) ResumeReading() error { return p.t.ResumeReading() }

// errnoOf gives a system error code as the syscall.Errno the net package
// would return (a library code stays an Error), as the core's PacketConn
// reports them.
func errnoOf(err error) error {
	if e, ok := err.(Error); ok && e < 0 && e > -4096 {
		return syscall.Errno(-e)
	}
	return err
}

// packetProtocol receives a PacketConn's transport events on the loop
// thread (a type of its own, so the Protocol methods are not the
// PacketConn's).
type packetProtocol struct{ pc *PacketConn }

// ConnectionMade binds the PacketConn to the transport and reads its
// address.
func (p packetProtocol) ConnectionMade(t *Transport) {
	var local *net.UDPAddr
	if a, err := t.SockName(); err == nil && a.AddrPort.IsValid() {
		local = net.UDPAddrFromAddrPort(a.AddrPort)
	}
	p.pc.s.Attach(packetTransport{t}, local)
}

// rawDatagramReceived queues a copy of one datagram, its sender decoded
// from the raw sockaddr (which keeps an IPv6 scope as the zone).
func (p packetProtocol) rawDatagramReceived(_ *Transport, data, from []byte) {
	p.pc.s.Datagram(data, packetconn.RawToUDPAddr(from))
}

// DatagramReceived is not called: dispatch prefers rawDatagramReceived.
func (p packetProtocol) DatagramReceived(_ *Transport, data []byte, from Addr) {
	p.pc.s.Datagram(data, net.UDPAddrFromAddrPort(from.AddrPort))
}

// ErrorReceived keeps a refused send for the next WriteTo.
func (p packetProtocol) ErrorReceived(_ *Transport, err error) { p.pc.s.SendFailed(errnoOf(err)) }

// ConnectionLost records the end and its error.
func (p packetProtocol) ConnectionLost(_ *Transport, err error) { p.pc.s.Lost(errnoOf(err)) }

// PauseWriting holds WriteTo back.
func (p packetProtocol) PauseWriting(*Transport) { p.pc.s.SetWritePaused(true) }

// ResumeWriting lets WriteTo go on.
func (p packetProtocol) ResumeWriting(*Transport) { p.pc.s.SetWritePaused(false) }

// DataReceived does not happen on a datagram transport.
func (packetProtocol) DataReceived(*Transport, []byte) {}

// EOFReceived does not happen on a datagram transport.
func (packetProtocol) EOFReceived(*Transport) bool { return false }

// rawDatagramReceiver is a Protocol that takes a datagram's sender as the
// raw struct sockaddr: dispatch calls it instead of DatagramReceived.
type rawDatagramReceiver interface {
	rawDatagramReceived(t *Transport, data, from []byte)
}

// ReadFrom reads the next datagram into p and returns its length and
// sender (*net.UDPAddr), blocking until one arrives, the read deadline
// passes (os.ErrDeadlineExceeded, Timeout() true), pc or the loop is
// closed (net.ErrClosed). A datagram longer than p is cut to len(p), and
// the rest of it is lost, as a UDP socket's read does.
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
