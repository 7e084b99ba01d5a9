// SPDX-License-Identifier: MIT

package libloop

import "golang.org/x/sys/unix"

// TransportKind says what a transport's fd is; values match the C ABI's
// LL_STREAM, LL_PIPE_READ, LL_PIPE_WRITE, LL_DATAGRAM.
type TransportKind uint8

// Transport kinds.
const (
	Stream    TransportKind = 1 // a connected stream socket (TCP, Unix) or any read/write fd
	PipeRead  TransportKind = 2 // the read end of a pipe
	PipeWrite TransportKind = 3 // the write end of a pipe
	Datagram  TransportKind = 4 // a UDP or Unix datagram socket
)

// asyncio's default write-buffer water marks (high 64 KiB, low = high/4).
const (
	DefaultHighWater = 64 << 10
	DefaultLowWater  = DefaultHighWater / 4
)

type transportState uint8

const (
	tOpen    transportState = iota
	tClosing                // close requested: reading stopped, flushing
	tClosed                 // fd closed; ConnectionLost queued
)

// Transport owns one non-blocking fd: it reads into the loop's shared
// buffer and delivers, writes at once and buffers only what the kernel
// refused, and tells its protocol what happened (asyncio's transports,
// selector_events.py). Methods are called on the loop's thread.
type Transport struct {
	loop  *Loop
	pw    *pendingWrites // nil while nothing waits: an idle transport carries none
	proto Protocol

	// Tag is the host's id for this transport, Data is free for the host.
	Tag  uint64
	Data any

	tls *tlsState // nil: plain; see tls.go

	// fd is an int32 beside evFD, sharing a word: with the flags below the
	// struct is 80 bytes (79 used), Go's 80-byte size class; past 80 it
	// would take 96, which a server with tens of thousands of idle
	// connections notices: 16 bytes each, and its Go heap reaches the first
	// collection's trigger sooner (a C server's RSS growth per idle
	// connection, 19,936 of them: 221-273 bytes with 96, 214-229 with 80).
	// So the buffered byte count lives in pendingWrites and water marks
	// other than the defaults in the loop's map (ownMarks), both touched
	// only while bytes wait. TestConnectionRecordSizes holds it there.
	fd   int32
	evFD int32 // Event.FD: a process pipe's child fd, else -1
	kind TransportKind

	// Flags, packed at the end.
	ownMarks    bool // SetWriteBufferLimits set marks other than the defaults: loop.io.marks[t]
	socket      bool
	state       transportState
	direct      bool // the write gate: DirectWritable (writegate.go)
	interest    uint8
	readPaused  bool
	readEOF     bool // no more reading: EOF seen, or nothing to read
	writePaused bool // PauseWriting sent, ResumeWriting not yet
	eofPending  bool // WriteEOF waits for the buffer to drain
	eofWritten  bool
	// closeAfterResume: Close drained the buffer of a paused transport; the
	// fd stays open until the ResumeWriting event is delivered, because
	// asyncio's resume_writing runs before the close and may still write
	// (sslproto sends its close_notify there).
	closeAfterResume bool
	hasHeld          bool // withheld read events wait in loop.io.held (withheld.go)
	// hostEnded: Close or Abort ended an open transport (the host's
	// choice). A transport that ended without it was lost (the peer, an
	// I/O error): writes to it are dropped, not refused (Write).
	hostEnded bool
	// peerWatch: a pipe's write end watched for reading, where readiness
	// means its reader went away: a FIFO (the kernel reports an error once
	// the read end is closed) or a socket (EOF from the peer). Not a
	// character device: a tty's slave reads ready when input arrives, and
	// asyncio's write pipe transport does not watch those either.
	peerWatch bool
}

// pendingWrites is what waits to be written: made when the kernel first
// refuses something, dropped when all of it is gone, so the tens of
// thousands of idle connections of a server carry no write state.
type pendingWrites struct {
	wq       [][]byte // unsent bytes; wq[0] starts at woff
	woff     int
	wsize    int           // bytes in wq
	iov      [][]byte      // writev scratch
	dgq      []OutDatagram // datagram transports: sends the kernel refused
	sendfile *sendfileOp
}

// sendfileOp returns the sendfile in progress, or nil.
func (t *Transport) sendfileOp() *sendfileOp {
	if t.pw == nil {
		return nil
	}
	return t.pw.sendfile
}

func (l *Loop) newTransport(fd int, kind TransportKind, socket bool, proto Protocol) *Transport {
	t := &Transport{loop: l, fd: int32(fd), kind: kind, socket: socket, evFD: -1, proto: proto,
		readEOF: kind == PipeWrite, peerWatch: kind == PipeWrite}
	t.direct = t.directWritable() // what a host reads when it learns of t
	return t
}

// start registers the fd and queues ConnectionMade, the first event.
func (t *Transport) start() error {
	if err := t.updateInterest(); err != nil {
		return err
	}
	t.loop.emit(Event{Kind: ConnectionMade, FD: int(t.evFD), T: t})
	return nil
}

// Loop returns the transport's loop.
func (t *Transport) Loop() *Loop { return t.loop }

// FD returns the transport's file descriptor (-1 once closed).
func (t *Transport) FD() int {
	if t.state == tClosed {
		return -1
	}
	return int(t.fd)
}

// Kind returns what the transport carries.
func (t *Transport) Kind() TransportKind { return t.kind }

// SetProtocol routes later events to proto (nil: to the loop's sink).
func (t *Transport) SetProtocol(proto Protocol) { t.proto = proto }

// SetEventFD sets the FD reported in events (a process pipe's child fd).
func (t *Transport) SetEventFD(fd int) { t.evFD = int32(fd) }

// IsClosing reports whether Close or Abort was called or the connection ended.
func (t *Transport) IsClosing() bool { return t.state != tOpen }

// IsReading reports whether the transport is reading (asyncio's is_reading).
func (t *Transport) IsReading() bool {
	return t.state == tOpen && !t.readPaused && !t.readEOF
}

// wanted is the interest the transport's state calls for.
func (t *Transport) wanted() uint8 {
	var m uint8
	if t.state == tClosed {
		return 0
	}
	if t.kind == PipeWrite {
		if t.peerWatch && t.state == tOpen {
			m |= evRead // its reader going away (see peerWatch)
		}
	} else if t.IsReading() || (t.handshaking() && !t.readEOF) {
		m |= evRead
	}
	if t.pw != nil && (t.pw.wsize > 0 || len(t.pw.dgq) > 0 || t.pw.sendfile != nil) {
		m |= evWrite
	}
	return m
}

func (t *Transport) updateInterest() error {
	m := t.wanted()
	if m == t.interest && t.state != tClosed {
		if t.loop.fds.get(t.fd) != nil {
			return nil
		}
	}
	err := t.loop.watchOwner(int(t.fd), t, m)
	if err == nil {
		t.interest = m
	}
	return err
}

// PauseReading stops reading until ResumeReading (asyncio's pause_reading).
func (t *Transport) PauseReading() error {
	if t.state == tClosed {
		return ECLOSED
	}
	if t.readPaused {
		return nil
	}
	t.readPaused = true
	t.syncRead()
	return t.updateInterest()
}

// ResumeReading undoes PauseReading.
func (t *Transport) ResumeReading() error {
	if t.state == tClosed {
		return ECLOSED
	}
	if !t.readPaused {
		return nil
	}
	t.readPaused = false
	t.syncRead()
	if t.hasHeld {
		t.loop.queueIO(t, evReplay) // what was withheld goes before any new read
	}
	return t.updateInterest()
}

// SetWriteBufferLimits sets the water marks (0, 0: asyncio's defaults;
// otherwise as given, so low 0 means "resume when fully drained").
// PauseWriting is sent when the buffer grows above high, ResumeWriting when
// it drains to low.
func (t *Transport) SetWriteBufferLimits(high, low int) error {
	if high == 0 && low == 0 {
		high, low = DefaultHighWater, DefaultLowWater
	}
	if high < 0 || low < 0 || low > high {
		return EINVAL
	}
	t.setMarks(high, low)
	t.maybePause()
	t.maybeResume()
	return nil
}

// WritePaused reports whether the buffer went above the high-water mark
// and has not drained to the low one since: the state PauseWriting and
// ResumeWriting announce, known here at once (asyncio's protocol hears of
// it inside write(); a host that gets events later asks this instead).
func (t *Transport) WritePaused() bool { return t.writePaused }

// WriteBufferLimits returns the water marks.
func (t *Transport) WriteBufferLimits() (high, low int) {
	if !t.ownMarks {
		return DefaultHighWater, DefaultLowWater
	}
	m := t.loop.io.marks[t]
	return m.high, m.low
}

// waterMarks are a transport's own write-buffer limits. Few transports
// have any, so they live in the loop's map (ioState.marks), kept only
// while they differ from the defaults, not in a field every transport
// pays for.
type waterMarks struct{ high, low int }

// setMarks keeps (high, low) as t's water marks. A closed transport,
// which writes no more, keeps none (its entry would outlive it).
func (t *Transport) setMarks(high, low int) {
	io := &t.loop.io
	if high == DefaultHighWater && low == DefaultLowWater || t.state == tClosed {
		if t.ownMarks {
			delete(io.marks, t)
			t.ownMarks = false
		}
		return
	}
	if io.marks == nil {
		io.marks = make(map[*Transport]waterMarks)
	}
	io.marks[t] = waterMarks{high, low}
	t.ownMarks = true
}

// buffered is how many bytes of the stream wait in the buffer.
func (t *Transport) buffered() int {
	if t.pw == nil {
		return 0
	}
	return t.pw.wsize
}

// WriteBufferSize returns how many bytes wait to be written.
func (t *Transport) WriteBufferSize() int {
	n := t.buffered()
	if t.pw != nil {
		for i := range t.pw.dgq {
			n += len(t.pw.dgq[i].Data)
		}
	}
	return n
}

func (t *Transport) maybePause() {
	if !t.writePaused && t.state != tClosed {
		if high, _ := t.WriteBufferLimits(); t.WriteBufferSize() <= high {
			return
		}
		t.writePaused = true
		t.loop.emit(Event{Kind: PauseWriting, FD: int(t.evFD), T: t})
	}
}

func (t *Transport) maybeResume() {
	if t.writePaused && t.state != tClosed {
		if _, low := t.WriteBufferLimits(); t.WriteBufferSize() > low {
			return
		}
		t.writePaused = false
		t.loop.emit(Event{Kind: ResumeWriting, FD: int(t.evFD), T: t})
	}
}

// Close stops reading, flushes the buffer, then closes the fd; the protocol
// then gets ConnectionLost with code 0. Closing twice does nothing.
func (t *Transport) Close() error {
	if t.state == tOpen {
		t.hostEnded = true
	}
	return t.close()
}

// close is Close without marking it the host's: the loop's own closes
// (EOF on a read pipe or a TLS transport).
func (t *Transport) close() error {
	if t.state != tOpen {
		return nil
	}
	if t.handshaking() {
		t.finish(0) // nothing of the host's was sent yet: as abort
		return nil
	}
	t.setState(tClosing)
	t.dropHeld()
	t.syncRead()
	if t.tls != nil {
		t.tlsClose()
		if t.state == tClosed {
			return nil
		}
	}
	if t.WriteBufferSize() == 0 && t.sendfileOp() == nil {
		t.finish(0)
		return nil
	}
	return t.updateInterest()
}

// Abort drops the buffer and closes now; ConnectionLost follows with code 0.
func (t *Transport) Abort() error {
	if t.state == tClosed {
		return nil
	}
	t.hostEnded = true
	t.finish(0)
	return nil
}

// fatal ends the transport on an I/O error (reset, EPIPE, ...): the loop
// and every other transport go on.
func (t *Transport) fatal(err error) { t.finish(Code(err)) }

// finish closes the fd and queues ConnectionLost with code, exactly once.
func (t *Transport) finish(code int) {
	if t.state == tClosed {
		return
	}
	t.setState(tClosed) // the gate shuts before the fd is closed
	t.dropHeld()
	t.syncRead()
	t.loop.unwatchOwner(int(t.fd), t)
	t.interest = 0
	unix.Close(int(t.fd))
	t.setMarks(DefaultHighWater, DefaultLowWater) // its own water marks, if any, go with it
	op := t.sendfileOp()
	t.dropWrites()
	if op != nil {
		// The transport's own failure (a reset read while the file went
		// out) is the sendfile's too; a close by the host is ECLOSED.
		if code != 0 {
			op.finish(Errno(code))
		} else {
			op.finish(ECLOSED)
		}
	}
	if t.tls != nil && t.tlsFinished(code) {
		return // a connect's handshake failed: its caller hears of it
	}
	t.loop.emit(Event{Kind: ConnectionLost, Code: code, FD: int(t.evFD), T: t})
}

// Refuse closes a transport without any event: for a host that cannot
// take a new connection (OnAccept) or an fd it could not register.
func (t *Transport) Refuse() {
	if t.state == tClosed {
		return
	}
	t.loop.unwatchOwner(int(t.fd), t)
	t.loopClosing()
}

// loopClosing closes the fd without events: the loop will not run again.
func (t *Transport) loopClosing() {
	if t.state == tClosed {
		return
	}
	t.setState(tClosed) // the gate shuts before the fd is closed
	t.hostEnded = true  // the loop's close or the host's refusal, not a loss
	t.dropHeld()
	t.syncRead() // a host refuses a connection in the middle of a delivery
	unix.Close(int(t.fd))
	t.dropWrites()
	t.setMarks(DefaultHighWater, DefaultLowWater)
	if t.tls != nil {
		t.tls.pipe.abort(ECLOSED) // a handshake goroutine ends
	}
}

// ioReady serves the readiness the selector reported.
func (t *Transport) ioReady(mask uint8) {
	if t.state == tClosed {
		return
	}
	if t.hasHeld && t.state == tOpen && !t.readPaused {
		t.replayHeld()
	}
	if mask&evRead != 0 {
		switch {
		case t.kind == Datagram:
			t.loop.plan.stale()
			if !t.hostReadDatagrams() {
				t.readDatagrams()
			}
		case t.kind == PipeWrite:
			t.loop.plan.stale()
			if t.peerWatch {
				t.peerGone()
			}
		case t.tls != nil && (t.IsReading() || (t.handshaking() && !t.readEOF)):
			t.loop.plan.stale()
			t.tlsRead()
		case t.IsReading():
			t.readStream()
		default:
			// Whatever this read leaves in the socket, a poll would
			// report again (pollplan.go).
			t.loop.plan.stale()
		}
	}
	if mask&evWrite != 0 && t.state != tClosed {
		if t.kind == Datagram {
			t.flushDatagrams()
		} else {
			t.writeReady()
		}
	}
}

// peerGone: a pipe's reader closed (or a socket's peer sent something,
// which a write end reads as the same: asyncio's rule too). With data still queued that is a broken
// pipe; otherwise a clean end (asyncio's _UnixWritePipeTransport).
func (t *Transport) peerGone() {
	if t.buffered() > 0 {
		t.finish(Code(unix.EPIPE))
	} else {
		t.finish(0)
	}
}

func (t *Transport) readStream() {
	buf := t.loop.readChunk()
	n, err := readNonblock(int(t.fd), buf)
	if err != nil {
		if err != unix.EAGAIN {
			t.loop.plan.stale() // the fd may still be ready (pollplan.go)
			if err != unix.EINTR {
				t.fatal(err)
			}
		}
		return
	}
	if n == 0 {
		t.loop.plan.stale() // a poll reports the end again (pollplan.go)
		t.readEOF = true
		t.updateInterest()
		t.loop.emit(Event{Kind: EOFReceived, FD: int(t.evFD), T: t})
		return
	}
	if n == len(buf) {
		t.loop.plan.stale() // more may wait: not drained (pollplan.go)
	}
	t.loop.emit(Event{Kind: DataReceived, FD: int(t.evFD), T: t, Data: t.loop.consume(n)})
}

// eofAnswered applies the protocol's answer to EOFReceived: close unless
// it asked to keep the transport open (a pipe's read end always closes,
// and so does TLS, as asyncio's SSL transports do).
func (t *Transport) eofAnswered(keepOpen bool) {
	switch {
	case !keepOpen:
		t.Close() // the protocol's answer: the host's close
	case t.kind == PipeRead || t.tls != nil:
		t.close()
	}
}

// Lost reports whether the transport ended without the host's Close or
// Abort: the peer went away or an I/O error ended it.
func (t *Transport) Lost() bool { return t.state == tClosed && !t.hostEnded }
