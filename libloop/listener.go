// SPDX-License-Identifier: MIT

package libloop

import (
	"time"

	"golang.org/x/sys/unix"
)

// acceptRetryDelay is how long a listener rests after EMFILE/ENFILE/ENOBUFS/
// ENOMEM before accepting again (asyncio's ACCEPT_RETRY_DELAY).
const acceptRetryDelay = time.Second

// maxAcceptsPerWake bounds the accepts of one readiness, so a flood of
// connections cannot starve the rest of the loop.
const maxAcceptsPerWake = 128

// Server accepts connections on one or more listening sockets; each
// accepted connection becomes a stream Transport whose first event,
// ConnectionMade, goes to the server's protocol (asyncio's Server).
type Server struct {
	loop    *Loop
	sockets []*listenSocket
	proto   Protocol
	closed  bool
	// OnAccept, when set, runs for each accepted transport before its
	// ConnectionMade is queued (a host gives it an id and a protocol there).
	OnAccept func(*Transport)
	// tls set: each accepted connection handshakes as a TLS server before
	// its ConnectionMade (tls_dial.go).
	tls *TLSConfig
	// unrefd: the server does not keep the loop alive (refs.go).
	unrefd bool
	// Tag is the host's id for this server, Data is free for the host.
	Tag  uint64
	Data any
}

type listenSocket struct {
	srv    *Server
	fd     int
	tcp    bool
	paused bool // resting after EMFILE
}

func (l *Loop) newServer(proto Protocol) *Server {
	return &Server{loop: l, proto: proto}
}

// listenOn makes fd a listening socket of the server and starts accepting.
func (s *Server) listenOn(fd int, backlog int, tcp bool) error {
	if err := unix.Listen(fd, backlog); err != nil {
		return err
	}
	ls := &listenSocket{srv: s, fd: fd, tcp: tcp}
	if err := s.loop.watchOwner(fd, ls, evRead); err != nil {
		return err
	}
	s.sockets = append(s.sockets, ls)
	return nil
}

// Close stops accepting and closes the listening sockets; connections
// already accepted stay open (asyncio's Server.close).
func (s *Server) Close() {
	if s.closed {
		return
	}
	s.closed = true
	for _, ls := range s.sockets {
		s.loop.unwatchOwner(ls.fd, ls)
		unix.Close(ls.fd)
	}
}

// Loop returns the server's loop.
func (s *Server) Loop() *Loop { return s.loop }

// IsServing reports whether the server still accepts.
func (s *Server) IsServing() bool { return !s.closed }

// NumSockets returns how many sockets the server listens on.
func (s *Server) NumSockets() int { return len(s.sockets) }

// SockName returns listening socket i's address as a raw struct sockaddr.
func (s *Server) SockName(i int) ([]byte, error) {
	if i < 0 || i >= len(s.sockets) {
		return nil, EINVAL
	}
	if s.closed {
		return nil, ECLOSED
	}
	return rawSockaddr(s.sockets[i].fd, false)
}

// Port returns the port of the first listening socket (0 for Unix sockets).
func (s *Server) Port() (int, error) {
	raw, err := s.SockName(0)
	if err != nil {
		return 0, err
	}
	return max(SockaddrPort(raw), 0), nil
}

// ioReady accepts until the backlog is empty (or a bound), as asyncio's
// _accept_connection does for each readiness.
func (ls *listenSocket) ioReady(mask uint8) {
	s := ls.srv
	for i := 0; i < maxAcceptsPerWake && !s.closed && !ls.paused; i++ {
		fd, err := acceptConn(ls.fd)
		switch err {
		case nil:
			s.accepted(fd, ls.tcp)
			continue
		case unix.EAGAIN, unix.EINTR, unix.ECONNABORTED, unix.EPROTO, unix.EPERM:
			if err == unix.EAGAIN {
				return
			}
			continue
		case unix.EMFILE, unix.ENFILE, unix.ENOBUFS, unix.ENOMEM:
			ls.rest(err)
			return
		default:
			s.loop.CallExceptionHandler(&ErrorContext{Message: "Error on accept(): " + err.Error(), Code: Code(err)})
			return
		}
	}
}

// rest stops accepting for acceptRetryDelay: the process is out of fds or
// memory, and the connections already open go on being served.
func (ls *listenSocket) rest(err error) {
	l := ls.srv.loop
	l.CallExceptionHandler(&ErrorContext{
		Message: "socket.accept() out of system resource: " + err.Error(), Code: Code(err)})
	ls.paused = true
	l.watchOwner(ls.fd, ls, 0)
	l.CallLater(acceptRetryDelay.Seconds(), func() {
		ls.paused = false
		if !ls.srv.closed {
			l.watchOwner(ls.fd, ls, evRead)
		}
	})
}

func (s *Server) accepted(fd int, tcp bool) {
	if tcp {
		unix.SetsockoptInt(fd, unix.IPPROTO_TCP, unix.TCP_NODELAY, 1)
	}
	t := s.loop.newTransport(fd, Stream, true, s.proto)
	if s.OnAccept != nil {
		s.OnAccept(t)
	}
	if t.state == tClosed {
		return // the host refused it (e.g. no id left)
	}
	if s.tls != nil {
		s.handshake(t)
		return
	}
	if err := t.start(); err != nil {
		t.Refuse()
	}
}

// loopClosing closes the listening socket: the loop will not run again.
func (ls *listenSocket) loopClosing() {
	ls.srv.closed = true
	unix.Close(ls.fd)
}

// ServeFD serves a socket the host already bound and put in listening
// state (asyncio's create_server(sock=...)): the server owns it from now
// on. Accepted TCP connections get TCP_NODELAY.
func (l *Loop) ServeFD(fd int, proto Protocol) (*Server, error) {
	if l.closed.Load() {
		return nil, ECLOSED
	}
	if fd < 0 {
		return nil, sysEBADF
	}
	acc, err := unix.GetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_ACCEPTCONN)
	if err != nil {
		return nil, err
	}
	if acc == 0 {
		return nil, EINVAL // not listening
	}
	if w := l.fds.get(int32(fd)); w != nil {
		return nil, sysEBUSY
	}
	if err := unix.SetNonblock(fd, true); err != nil {
		return nil, err
	}
	unix.CloseOnExec(fd)
	tcp := false
	if sa, err := unix.Getsockname(fd); err == nil {
		switch sa.(type) {
		case *unix.SockaddrInet4, *unix.SockaddrInet6:
			tcp = true
		}
	}
	s := l.newServer(proto)
	ls := &listenSocket{srv: s, fd: fd, tcp: tcp}
	if err := l.watchOwner(fd, ls, evRead); err != nil {
		return nil, err
	}
	s.sockets = append(s.sockets, ls)
	return s, nil
}
