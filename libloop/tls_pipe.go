// SPDX-License-Identifier: MIT

package libloop

import (
	"io"
	"net"
	"sync"
	"time"
)

// tlsPipe is the net.Conn a tls.Conn runs over: the loop, not crypto/tls,
// owns the socket. Ciphertext the loop read from the socket is fed in;
// ciphertext crypto/tls writes goes out through the transport's own write
// path.
//
// It has two modes. During the handshake a goroutine runs crypto/tls's
// Handshake (which makes every read error final, so it cannot be driven
// without blocking): Read blocks until the loop feeds bytes, and Write
// queues bytes and asks the loop to send them. After the handshake the
// pipe is synchronous: the loop thread calls tls.Conn's Read and Write
// itself, Read returns errWouldBlock when the fed bytes are used up (a
// Temporary error, which crypto/tls does not keep once the handshake is
// done; a partial record waits in its buffer), and Write appends to the
// loop's shared output scratch, flushed when the tls.Conn call returns.
// So no goroutine switch is paid per record.
type tlsPipe struct {
	mu   sync.Mutex
	cond sync.Cond
	sync bool // after the handshake: only the loop thread uses the pipe

	in  []byte // ciphertext not yet taken by crypto/tls
	eof bool   // the socket reached EOF
	err error  // the socket failed, or the handshake was abandoned

	out         []byte // handshake mode: ciphertext for the loop to send
	flushQueued bool

	st *tlsState
}

// errWouldBlock tells crypto/tls that no more input is there for now.
var errWouldBlock net.Error = wouldBlock{}

type wouldBlock struct{}

func (wouldBlock) Error() string   { return "libloop: TLS input would block" }
func (wouldBlock) Timeout() bool   { return true }
func (wouldBlock) Temporary() bool { return true }

func newTLSPipe(st *tlsState) *tlsPipe {
	p := &tlsPipe{st: st}
	p.cond.L = &p.mu
	return p
}

// Read gives crypto/tls the ciphertext fed so far.
func (p *tlsPipe) Read(b []byte) (int, error) {
	if p.sync {
		return p.take(b)
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	for len(p.in) == 0 && !p.eof && p.err == nil {
		p.cond.Wait()
	}
	return p.take(b)
}

func (p *tlsPipe) take(b []byte) (int, error) {
	if len(p.in) == 0 {
		switch {
		case p.err != nil:
			return 0, p.err
		case p.eof:
			return 0, io.EOF
		}
		return 0, errWouldBlock
	}
	n := copy(b, p.in)
	p.in = p.in[n:]
	if len(p.in) == 0 {
		p.in = nil
	}
	return n, nil
}

// Write takes ciphertext crypto/tls produced.
func (p *tlsPipe) Write(b []byte) (int, error) {
	if p.sync {
		return p.st.writeOut(b)
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.err != nil {
		return 0, p.err
	}
	p.out = append(p.out, b...)
	if !p.flushQueued {
		p.flushQueued = true
		if err := p.st.t.loop.CallSoonThreadsafe(p.st.flushHandshake); err != nil {
			return 0, err
		}
	}
	return len(b), nil
}

// feed hands bytes the loop read to the handshake goroutine (copied: the
// loop's read buffer is reused).
func (p *tlsPipe) feed(b []byte) {
	p.mu.Lock()
	p.in = append(p.in, b...)
	p.mu.Unlock()
	p.cond.Signal()
}

// feedEnd tells the handshake goroutine the socket ended (err nil: EOF);
// what was fed before is read first, so a peer's alert is still seen.
func (p *tlsPipe) feedEnd(err error) {
	p.mu.Lock()
	if err == nil {
		p.eof = true
	} else if p.err == nil {
		p.err = err
	}
	p.mu.Unlock()
	p.cond.Signal()
}

// abort makes every later Read and Write fail at once, waking a blocked
// handshake goroutine so it ends.
func (p *tlsPipe) abort(err error) {
	p.mu.Lock()
	p.in, p.out = nil, nil
	if p.err == nil {
		p.err = err
	}
	p.mu.Unlock()
	p.cond.Signal()
}

// takeOut hands the loop what the handshake goroutine wrote.
func (p *tlsPipe) takeOut() []byte {
	p.mu.Lock()
	defer p.mu.Unlock()
	b := p.out
	p.out, p.flushQueued = nil, false
	return b
}

// goSync switches to synchronous mode; the handshake goroutine is done.
func (p *tlsPipe) goSync() {
	p.mu.Lock()
	p.sync = true
	p.mu.Unlock()
}

// The rest of net.Conn: the loop owns the fd, so these do nothing.

func (p *tlsPipe) Close() error                     { return nil }
func (p *tlsPipe) LocalAddr() net.Addr              { return pipeAddr{} }
func (p *tlsPipe) RemoteAddr() net.Addr             { return pipeAddr{} }
func (p *tlsPipe) SetDeadline(time.Time) error      { return nil }
func (p *tlsPipe) SetReadDeadline(time.Time) error  { return nil }
func (p *tlsPipe) SetWriteDeadline(time.Time) error { return nil }

type pipeAddr struct{}

func (pipeAddr) Network() string { return "libloop" }
func (pipeAddr) String() string  { return "libloop-transport" }
