// SPDX-License-Identifier: MIT

package libloop

import (
	"crypto/tls"
	"errors"
	"io"
	"time"

	"golang.org/x/sys/unix"
)

// Handshake phases of a TLS transport.
const (
	hsRunning uint8 = iota // the handshake goroutine runs
	hsDone                 // the loop thread drives the tls.Conn
	hsFailed               // ended before completing
)

// tlsFlushAt is when the shared output scratch is sent while one large
// write is still being encrypted.
const tlsFlushAt = 256 << 10

// tlsState is a stream transport's TLS layer: the transport's reads are
// decrypted into its DataReceived events, its writes encrypted on the way
// out (see tlsPipe for how crypto/tls is driven).
type tlsState struct {
	t      *Transport
	conn   *tls.Conn
	pipe   *tlsPipe
	server bool
	phase  uint8
	// silent: a failed handshake ends the transport with no event (a
	// connect: its caller hears of the failure, the protocol never saw it).
	silent     bool
	verifyCode Errno // written on the handshake goroutine before it reports
	shutdown   time.Duration
	timer      *Handle
	onDone     func(error)
	pending    [][]byte // plaintext written during the handshake
}

// StartTLS runs a TLS handshake on an open stream transport (asyncio's
// start_tls; server true: as the server). done runs on the loop thread
// once the handshake ended: nil, or the failure's code, which also ends
// the transport with ConnectionLost and that code. Writes made meanwhile
// are sent once it completes.
func (t *Transport) StartTLS(cfg *TLSConfig, server bool, serverName string, done func(error)) error {
	switch {
	case cfg == nil || done == nil:
		return EINVAL
	case t.state != tOpen:
		return ECLOSED
	case t.kind != Stream:
		return EINVAL
	case t.tls != nil || t.eofWritten || t.readEOF || t.sendfileOp() != nil:
		return ESTATE
	}
	return t.startTLS(cfg, server, serverName, false, done)
}

func (t *Transport) startTLS(cfg *TLSConfig, server bool, serverName string, silent bool, done func(error)) error {
	st := &tlsState{t: t, server: server, silent: silent, onDone: done}
	tc, hs, sd := cfg.connConfig(st, serverName)
	st.shutdown = sd
	st.pipe = newTLSPipe(st)
	if server {
		st.conn = tls.Server(st.pipe, tc)
	} else {
		st.conn = tls.Client(st.pipe, tc)
	}
	timer, err := t.loop.CallLater(hs.Seconds(), func() {
		if t.tls == st && st.phase == hsRunning {
			t.finish(int(ETIMEDOUT))
		}
	})
	if err != nil {
		return err
	}
	st.setTimer(timer)
	t.setTLS(st)
	if err := t.updateInterest(); err != nil {
		st.stopTimer()
		t.setTLS(nil)
		return err
	}
	// Bytes read before the handshake and withheld from the protocol (it
	// paused reading, as asyncio's start_tls does) are the peer's first
	// flight: the handshake reads them first.
	for _, h := range t.takeHeld() {
		if len(h.data) > 0 {
			st.pipe.feed(h.data)
		}
	}
	t.syncRead()
	go func() {
		err := st.conn.Handshake()
		// A closed loop refuses this; the transport is gone with it.
		t.loop.CallSoonThreadsafe(func() { st.handshakeDone(err) })
	}()
	return nil
}

// handshaking reports whether the transport waits for its handshake: it
// reads then whatever the host asked, and delivers nothing.
func (t *Transport) handshaking() bool { return t.tls != nil && t.tls.phase == hsRunning }

// flushHandshake sends what the handshake goroutine wrote.
func (st *tlsState) flushHandshake() {
	b := st.pipe.takeOut()
	if len(b) > 0 && st.t.state != tClosed {
		st.t.writeRaw(b)
	}
}

// handshakeDone takes the goroutine's outcome on the loop thread.
func (st *tlsState) handshakeDone(err error) {
	t := st.t
	if t.tls != st || st.phase != hsRunning {
		return // ended already (timeout, abort, socket error)
	}
	st.flushHandshake() // the last flight, or the alert that says why not
	if t.state == tClosed {
		return
	}
	if err != nil {
		t.finish(int(tlsCode(err)))
		return
	}
	st.stopTimer()
	st.phase = hsDone
	st.pipe.goSync()
	t.updateInterest()
	st.onDone(nil)
	for _, p := range st.pending {
		if t.state == tClosed {
			break
		}
		t.Write(p)
	}
	st.pending = nil
	if t.state == tOpen {
		t.tlsDecrypt() // what came with the last handshake flight
	}
}

// ended runs when a transport whose handshake runs is finished (code 0:
// closed by the host): the goroutine is released and the initiator told.
func (st *tlsState) ended(code int) {
	st.phase = hsFailed
	st.stopTimer()
	st.pipe.abort(ECLOSED)
	st.pending = nil
	var err error = ECLOSED
	if code != 0 {
		err = Errno(code)
	}
	st.onDone(err)
}

// writeOut collects ciphertext on the loop thread (synchronous mode).
func (st *tlsState) writeOut(b []byte) (int, error) {
	t := st.t
	if t.state == tClosed {
		return 0, ECLOSED
	}
	ls := &t.loop.io
	ls.tlsOut = append(ls.tlsOut, b...)
	if len(ls.tlsOut) >= tlsFlushAt {
		st.flushOut()
	}
	return len(b), nil
}

// flushOut sends the collected ciphertext through the transport's write path.
func (st *tlsState) flushOut() {
	ls := &st.t.loop.io
	if len(ls.tlsOut) > 0 {
		b := ls.tlsOut
		ls.tlsOut = b[:0]
		if st.t.state != tClosed {
			st.t.writeRaw(b)
		}
	}
	if cap(ls.tlsOut) > 4*tlsFlushAt {
		ls.tlsOut = nil // one huge write does not pin its memory
	}
}

// tlsRead serves a readable TLS transport: during the handshake the bytes
// go to the goroutine, afterwards they are decrypted here.
func (t *Transport) tlsRead() {
	st := t.tls
	ls := &t.loop.io
	if ls.tlsIn == nil {
		ls.tlsIn = make([]byte, maxReadChunk)
	}
	n, err := readNonblock(int(t.fd), ls.tlsIn)
	if err == unix.EAGAIN || err == unix.EINTR {
		return
	}
	if st.phase == hsRunning {
		switch {
		case err != nil:
			st.pipe.feedEnd(err)
		case n == 0:
			st.pipe.feedEnd(nil)
		default:
			st.pipe.feed(ls.tlsIn[:n])
			return
		}
		t.readEOF = true // the handshake goroutine decides what that means
		t.updateInterest()
		return
	}
	if err != nil {
		t.fatal(err)
		return
	}
	switch {
	case n == 0:
		st.pipe.eof = true
	case len(st.pipe.in) > 0: // left from the handshake, in the pipe's own memory
		st.pipe.in = append(st.pipe.in, ls.tlsIn[:n]...)
	default:
		st.pipe.in = ls.tlsIn[:n]
	}
	t.tlsDecrypt()
	st.pipe.in = nil // drained, unless the transport ended meanwhile
}

// tlsDecrypt delivers every plaintext byte the fed ciphertext holds, in
// events of up to a read chunk, then acts on EOF or an error.
func (t *Transport) tlsDecrypt() {
	st := t.tls
	for t.state == tOpen {
		chunk := t.loop.readChunk() // may deliver queued events first
		if t.state != tOpen {
			return // closed by a protocol meanwhile: no data after close
		}
		got := 0
		var err error
		for got < len(chunk) && err == nil {
			var n int
			n, err = st.conn.Read(chunk[got:])
			got += n
		}
		if got > 0 {
			t.loop.emit(Event{Kind: DataReceived, FD: int(t.evFD), T: t, Data: t.loop.consume(got)})
		}
		st.flushOut() // post-handshake messages may answer (KeyUpdate)
		switch {
		case err == nil:
			continue // the chunk is full: more may be there
		case errors.Is(err, errWouldBlock):
		case err == io.EOF:
			t.readEOF = true
			t.updateInterest()
			t.loop.emit(Event{Kind: EOFReceived, FD: int(t.evFD), T: t})
		default:
			t.finish(int(tlsCode(err)))
		}
		return
	}
}

// tlsWrite encrypts p and sends it (during the handshake: keeps a copy).
func (t *Transport) tlsWrite(p []byte) error {
	st := t.tls
	if t.state != tOpen {
		return ECLOSED // close_notify is sent: nothing may follow it
	}
	if st.phase != hsDone {
		st.pending = append(st.pending, append([]byte(nil), p...))
		return nil
	}
	_, err := st.conn.Write(p)
	st.flushOut()
	if err != nil && t.state != tClosed {
		t.finish(int(tlsCode(err)))
	}
	return nil
}

// tlsClose sends close_notify ahead of Close's flush, and bounds the flush
// by the shutdown timeout (asyncio's ssl_shutdown_timeout): a peer that
// stops reading cannot keep the transport forever.
func (t *Transport) tlsClose() {
	st := t.tls
	if st.phase != hsDone {
		return
	}
	st.conn.CloseWrite()
	st.flushOut()
	if t.state == tClosed || t.buffered() == 0 {
		return
	}
	timer, err := t.loop.CallLater(st.shutdown.Seconds(), func() {
		if t.state == tClosing {
			t.finish(int(ETIMEDOUT))
		}
	})
	if err == nil {
		st.setTimer(timer)
	}
}

// setTimer keeps h with a reference of ours, so a Cancel after it ran
// never reaches a recycled handle.
func (st *tlsState) setTimer(h *Handle) {
	st.stopTimer()
	st.t.loop.RetainHandle(h)
	st.timer = h
}

// stopTimer cancels the handshake or shutdown timer and lets it go.
func (st *tlsState) stopTimer() {
	if h := st.timer; h != nil {
		st.timer = nil
		h.Cancel()
		st.t.loop.ReleaseHandle(h)
	}
}

// tlsFinished runs as the transport closes: no goroutine or timer outlives it.
func (t *Transport) tlsFinished(code int) (silent bool) {
	st := t.tls
	if st.phase == hsRunning {
		st.ended(code)
		return st.silent
	}
	st.stopTimer()
	return false
}

// TLSState is what the handshake settled (version, cipher, ALPN, peer
// certificates, resumption): EINVAL for a plain transport, ESTATE before
// the handshake completed.
func (t *Transport) TLSState() (tls.ConnectionState, error) {
	switch {
	case t.tls == nil:
		return tls.ConnectionState{}, EINVAL
	case t.tls.phase != hsDone:
		return tls.ConnectionState{}, ESTATE
	}
	return t.tls.conn.ConnectionState(), nil
}

// TLSVerifyResult is 0 when the peer's certificate chain verified (and, on
// a client, named the server), else why not: ETLSCERT, ETLSHOST, or
// ETLSNOCERT when the peer sent none. With verification off a handshake
// completes whatever this says. Errors as TLSState.
func (t *Transport) TLSVerifyResult() (Errno, error) {
	if _, err := t.TLSState(); err != nil {
		return 0, err
	}
	return t.tls.verifyCode, nil
}

// IsTLS reports whether the transport carries TLS.
func (t *Transport) IsTLS() bool { return t.tls != nil }
