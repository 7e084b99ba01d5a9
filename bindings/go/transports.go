// SPDX-License-Identifier: MIT

package libloop

import (
	"unsafe"
)

// TransportKind says what ll_transport_open adopts.
type TransportKind int

// The kinds of include/libloop/transport.h.
const (
	KindStream    TransportKind = 1 // LL_STREAM: a connected stream socket, or any fd that reads and writes
	KindPipeRead  TransportKind = 2 // LL_PIPE_READ: a pipe's read end (EOF closes it)
	KindPipeWrite TransportKind = 3 // LL_PIPE_WRITE: a pipe's write end
	KindDatagram  TransportKind = 4 // LL_DATAGRAM: a datagram socket
)

// Transport is a libloop transport (an ll_transport id): one non-blocking
// fd the library reads, writes, buffers and closes, telling its Protocol
// what happened. Use it on the loop's thread. Its id is valid until its
// Protocol's ConnectionLost returns; after that every method fails with
// EBADHANDLE. A transport is never released: Close or Abort it.
type Transport struct {
	loop  *Loop
	id    uint64
	proto Protocol
	lost  bool
	// stopped: PauseReading, Close or Abort was called (and not undone by
	// ResumeReading): the batch sink hands its later read events of the
	// same delivery back to the library (Event.withhold).
	stopped, paused, closing bool
	heldIn                   uint64 // the batch delivery in which a read was withheld
}

// setStopped keeps stopped after a call that succeeded.
func (t *Transport) setStopped(rc int32, paused, closing bool) int32 {
	if rc == 0 {
		t.paused, t.closing = paused, t.closing || closing
		t.stopped = t.paused || t.closing
	}
	return rc
}

// ID returns the ll_transport id.
func (t *Transport) ID() uint64 { return t.id }

// Loop returns the transport's loop.
func (t *Transport) Loop() *Loop { return t.loop }

// Protocol returns the protocol receiving the transport's events.
func (t *Transport) Protocol() Protocol { return t.proto }

// SetProtocol routes the transport's later events to p (asyncio's
// set_protocol), from the very next one.
func (t *Transport) SetProtocol(p Protocol) { t.proto = p }

// Lost reports whether ConnectionLost has been delivered (or the loop was
// closed under the transport).
func (t *Transport) Lost() bool { return t.lost }

func (t *Transport) raw() *Raw { return t.loop.raw() }

// maxScratch bounds the C buffer a write is copied through; a longer write
// is passed in pieces of this size (the library buffers what the kernel does
// not take, so pieces keep their order).
const maxScratch = 1 << 20

// withScratch calls fn with the loop's C scratch buffer grown to at least
// want bytes; the caller copies its bytes in there, so Go memory is never
// handed to the library.
func (l *Loop) withScratch(want uintptr, fn func(c []byte) int32) error {
	n := l.netInit()
	n.scratchMu.Lock()
	defer n.scratchMu.Unlock()
	if n.scratchN < want {
		if n.scratch != nil {
			libc.free(n.scratch)
			n.scratch, n.scratchN = nil, 0
		}
		c := libc.malloc(want)
		if c == nil {
			return ENOMEM
		}
		n.scratch, n.scratchN = c, want
	}
	return check(fn(unsafe.Slice((*byte)(n.scratch), want)))
}

// cPtr returns the address of a C scratch slice's first byte.
func cPtr(c []byte) unsafe.Pointer { return unsafe.Pointer(unsafe.SliceData(c)) }

// Write sends p: what the kernel takes now is sent at once, the rest is
// buffered by the library and sent as the socket drains; Write never
// blocks and p may be reused at once. Write errors (a reset, EPIPE) end
// the transport with ConnectionLost instead of being returned here, and
// writes after such a loss return nil with their bytes dropped (asyncio's
// write counts them). ECLOSED after Close or Abort, ESTATE after WriteEOF,
// EINVAL on a read pipe.
func (t *Transport) Write(p []byte) error {
	if len(p) == 0 {
		return check(t.raw().TransportWrite(t.id, nil, 0))
	}
	for len(p) > 0 {
		n := min(len(p), maxScratch)
		err := t.loop.withScratch(uintptr(n), func(c []byte) int32 {
			copy(c, p[:n])
			return t.raw().TransportWrite(t.id, cPtr(c), uintptr(n))
		})
		if err != nil {
			return err
		}
		p = p[n:]
	}
	return nil
}

// WriteEOF shuts the write side down once the buffer is flushed; reading
// goes on. EINVAL for a datagram transport or a read pipe.
func (t *Transport) WriteEOF() error { return check(t.raw().TransportWriteEOF(t.id)) }

// CanWriteEOF reports whether WriteEOF is supported (streams, write pipes).
func (t *Transport) CanWriteEOF() (bool, error) { return boolRC(t.raw().TransportCanWriteEOF(t.id)) }

// Close stops reading, flushes the buffer, then closes; ConnectionLost
// follows with a nil error. Closing twice does nothing.
func (t *Transport) Close() error {
	return check(t.setStopped(t.raw().TransportClose(t.id), t.paused, true))
}

// Abort drops the buffer and closes now; ConnectionLost follows.
func (t *Transport) Abort() error {
	return check(t.setStopped(t.raw().TransportAbort(t.id), t.paused, true))
}

// PauseReading stops reading until ResumeReading.
func (t *Transport) PauseReading() error {
	return check(t.setStopped(t.raw().TransportPauseReading(t.id), true, false))
}

// ResumeReading resumes reading.
func (t *Transport) ResumeReading() error {
	return check(t.setStopped(t.raw().TransportResumeReading(t.id), false, false))
}

// IsReading reports whether the transport reads (false if paused, closing
// or past EOF).
func (t *Transport) IsReading() (bool, error) { return boolRC(t.raw().TransportIsReading(t.id)) }

// IsClosing reports whether Close or Abort was called or the connection
// ended.
func (t *Transport) IsClosing() (bool, error) { return boolRC(t.raw().TransportIsClosing(t.id)) }

// SetWriteBufferLimits sets the water marks of PauseWriting (sent once the
// buffer grows above high) and ResumeWriting (once it drains to low).
// 0, 0: asyncio's defaults (64 KiB, 16 KiB); low 0 with high > 0: high/4.
// EINVAL for negative values or low > high.
func (t *Transport) SetWriteBufferLimits(high, low int) error {
	if high < 0 || low < 0 {
		return EINVAL
	}
	return check(t.raw().TransportSetWriteBufferLimits(t.id, uintptr(high), uintptr(low)))
}

// WriteBufferSize returns the number of bytes waiting in the write buffer.
func (t *Transport) WriteBufferSize() (int, error) {
	v, err := outCall(func(out unsafe.Pointer) int32 { return t.raw().TransportGetWriteBufferSize(t.id, out) })
	return int(v), err
}

// FD returns the transport's fd; the library owns it (do not close it).
func (t *Transport) FD() (int, error) {
	rc := t.raw().TransportFD(t.id)
	if rc < 0 {
		return -1, Error(rc)
	}
	return int(rc), nil
}

// SockName returns the local address; an Error matching ENOTSOCK for a pipe.
func (t *Transport) SockName() (Addr, error) {
	return readSockaddr(func(a, n unsafe.Pointer) int32 { return t.raw().TransportSockname(t.id, a, n) })
}

// PeerName returns the connected peer's address (ENOTCONN if none).
func (t *Transport) PeerName() (Addr, error) {
	return readSockaddr(func(a, n unsafe.Pointer) int32 { return t.raw().TransportPeername(t.id, a, n) })
}

// Sendfile sends count bytes of the file fd from offset (count 0: to its
// end) after whatever is buffered, zero-copy where the OS allows. The
// transport does not take fd: keep it open until the future is done. The
// future's value (Result) is the number of bytes sent; it fails with an
// errno code, or ECLOSED if the transport ends first. ESTATE while another
// Sendfile runs. Release the future when done.
func (t *Transport) Sendfile(fd int, offset, count int64) (*Future, error) {
	return t.loop.newFuture(func(out unsafe.Pointer) int32 {
		return t.raw().TransportSendfile(t.id, int32(fd), offset, count, out)
	})
}

// fitsInt32 reports whether v passes to a C int unchanged.
func fitsInt32(v int) bool { return int(int32(v)) == v }

// boolRC turns a 1/0/negative C result into a bool and an error.
func boolRC(rc int32) (bool, error) {
	if rc < 0 {
		return false, Error(rc)
	}
	return rc == 1, nil
}

// DialFuture is the future of DialTCP or DialUnix: its value is the new
// transport's id, and Transport returns the Transport itself. Release it
// when done; the transport lives on.
type DialFuture struct {
	Future
	t *Transport
}

// Transport returns the connected transport once the future is done, or
// the connect error (an Error: ECONNREFUSED, ENONAME ...; ESTATE while
// pending).
func (d *DialFuture) Transport() (*Transport, error) {
	if _, err := d.Result(); err != nil {
		return nil, err
	}
	return d.t, nil
}

// DialTCP connects to host:port (asyncio's create_connection); a name is
// resolved off the loop thread and each address tried in turn. p receives
// the transport's events, ConnectionMade before the future's done
// callbacks. EINVAL for a port outside 0..65535.
func (l *Loop) DialTCP(host string, port int, p Protocol) (*DialFuture, error) {
	if !fitsInt32(port) {
		return nil, EINVAL
	}
	return l.dial(host, p, func(h unsafe.Pointer, fn, arg uintptr, out unsafe.Pointer) int32 {
		return l.raw().TCPConnect(l.id, h, int32(port), fn, arg, out)
	})
}

// DialUnix connects to the Unix stream socket at path ("@name": an abstract
// name on Linux).
func (l *Loop) DialUnix(path string, p Protocol) (*DialFuture, error) {
	return l.dial(path, p, func(h unsafe.Pointer, fn, arg uintptr, out unsafe.Pointer) int32 {
		return l.raw().UnixConnect(l.id, h, fn, arg, out)
	})
}

func (l *Loop) dial(host string, p Protocol, call func(h unsafe.Pointer, fn, arg uintptr, out unsafe.Pointer) int32) (*DialFuture, error) {
	l.netInit()
	d := &DialFuture{Future: Future{lib: l.lib, loop: l, owned: true}}
	key := addEntry(&cbEntry{kind: kindProtocol, owner: l.id,
		proto: func(_ uint64, ev Event) int32 {
			return l.dispatch(ev, func(id uint64) *Transport {
				d.t = l.made(id, p)
				return d.t
			})
		}})
	cs, err := NewCString(host)
	if err != nil {
		removeEntry(key)
		return nil, err
	}
	defer cs.Free()
	id, err := outCall(func(out unsafe.Pointer) int32 { return call(cs.Ptr(), ProtocolFnPtr(), key, out) })
	if err != nil {
		removeEntry(key)
		return nil, err
	}
	d.id = id
	ownedFutures.Store(id, &d.Future)
	// The dial's entry serves only ConnectionMade, which runs before the
	// future's done callbacks: drop it then (also when the connect failed).
	done := addEntry(&cbEntry{kind: kindPlain, once: true, owner: l.id,
		plain: func(uint64) { removeEntry(key) }})
	if l.raw().FutureAddDoneCallback(id, CallbackPtr(), done) != 0 {
		removeEntry(done) // the loop's Close frees key then
	}
	return d, nil
}

// made records the Transport of a connection whose first event came
// through the protocol trampoline, and moves its later events to the
// batch sink.
func (l *Loop) made(id uint64, p Protocol) *Transport {
	t := l.addTransport(id, p)
	if !perEventDelivery {
		l.raw().TransportSetProtocol(id, 0, 0)
	}
	return t
}

// OpenTransport adopts fd, which the transport owns and closes from now on
// (asyncio's connect_accepted_socket, connect_read_pipe,
// connect_write_pipe). p's ConnectionMade comes in a later callback.
// Errors matching EBADF (closed fd), EPERM (a regular file), EBUSY (the fd
// is watched already), EINVAL (unknown kind).
func (l *Loop) OpenTransport(fd int, kind TransportKind, p Protocol) (*Transport, error) {
	if !fitsInt32(fd) || !fitsInt32(int(kind)) {
		return nil, EINVAL
	}
	n := l.netInit()
	fn, arg := l.protoArgs(n)
	id, err := outCall(func(out unsafe.Pointer) int32 {
		return l.raw().TransportOpen(l.id, int32(fd), int32(kind), fn, arg, out)
	})
	if err != nil {
		return nil, err
	}
	return l.addTransport(id, p), nil
}
