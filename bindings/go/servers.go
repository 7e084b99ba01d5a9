// SPDX-License-Identifier: MIT

package libloop

import "unsafe"

// Server is a listening server (an ll_server id): each accepted connection
// becomes a Transport whose Protocol the server's factory makes. Use it on
// the loop's thread; Release it when done (which also closes it). Open
// connections outlive the server.
type Server struct {
	loop *Loop
	id   uint64
	key  uintptr // the protocol trampoline's entry for accepted connections
}

// ListenOption tunes ListenTCP, ListenUnix and OpenUDP.
type ListenOption func(*listenConfig)

type listenConfig struct {
	backlog int
	flags   int
}

// Backlog sets the listen backlog (default 0: the library's 100).
func Backlog(n int) ListenOption { return func(c *listenConfig) { c.backlog = n } }

// flagReusePort is the header's LL_REUSE_PORT flag.
const flagReusePort = 1 // LL_REUSE_PORT

// ReusePort sets SO_REUSEPORT on the socket (LL_REUSE_PORT).
func ReusePort() ListenOption { return func(c *listenConfig) { c.flags |= flagReusePort } }

func listenOptions(opts []ListenOption) listenConfig {
	var c listenConfig
	for _, o := range opts {
		o(&c)
	}
	return c
}

// ListenTCP listens on host:port. host "" listens on every interface, IPv4
// and IPv6, on one port; port 0 picks a free one (see Port). A name is
// looked up in place only while the loop is not running, ENEEDASYNC while
// it runs: ListenTCPWith resolves off the loop thread. factory makes the
// Protocol of each accepted connection (TCP_NODELAY on), on the loop's
// thread, just before its ConnectionMade. Errors: an Error matching
// EADDRINUSE or EACCES, ENONAME, ENEEDASYNC, EINVAL (nil factory, bad port,
// negative backlog).
func (l *Loop) ListenTCP(host string, port int, factory func() Protocol, opts ...ListenOption) (*Server, error) {
	c := listenOptions(opts)
	if !fitsInt32(port) || !fitsInt32(c.backlog) {
		return nil, EINVAL
	}
	return l.listen(host, host == "", factory, func(h unsafe.Pointer, fn, arg uintptr, out unsafe.Pointer) int32 {
		return l.raw().TCPListen(l.id, h, int32(port), int32(c.backlog), int32(c.flags), fn, arg, out)
	})
}

// ListenUnix listens on a Unix stream socket at path ("@name": abstract on
// Linux); a stale socket file there is removed first, any other file is
// EADDRINUSE.
func (l *Loop) ListenUnix(path string, factory func() Protocol, opts ...ListenOption) (*Server, error) {
	c := listenOptions(opts)
	if !fitsInt32(c.backlog) {
		return nil, EINVAL
	}
	return l.listen(path, false, factory, func(h unsafe.Pointer, fn, arg uintptr, out unsafe.Pointer) int32 {
		return l.raw().UnixListen(l.id, h, int32(c.backlog), fn, arg, out)
	})
}

func (l *Loop) listen(host string, null bool, factory func() Protocol, call func(h unsafe.Pointer, fn, arg uintptr, out unsafe.Pointer) int32) (*Server, error) {
	if factory == nil {
		return nil, EINVAL
	}
	l.netInit()
	key := addEntry(&cbEntry{kind: kindProtocol, owner: l.id,
		proto: func(_ uint64, ev Event) int32 {
			return l.dispatch(ev, func(id uint64) *Transport { return l.made(id, factory()) })
		}})
	var h unsafe.Pointer
	if !null {
		cs, err := NewCString(host)
		if err != nil {
			removeEntry(key)
			return nil, err
		}
		defer cs.Free()
		h = cs.Ptr()
	}
	id, err := outCall(func(out unsafe.Pointer) int32 { return call(h, ProtocolFnPtr(), key, out) })
	if err != nil {
		removeEntry(key)
		return nil, err
	}
	return &Server{loop: l, id: id, key: key}, nil
}

// ID returns the ll_server id (0 after Release).
func (s *Server) ID() uint64 { return s.id }

func (s *Server) raw() *Raw { return s.loop.raw() }

// Port returns the port of the server's first socket (0 for Unix sockets).
func (s *Server) Port() (int, error) {
	v, err := outCall(func(out unsafe.Pointer) int32 { return s.raw().ServerPort(s.id, out) })
	return int(int32(v)), err
}

// NumSockets returns how many sockets the server listens on.
func (s *Server) NumSockets() (int, error) {
	rc := s.raw().ServerNumSockets(s.id)
	if rc < 0 {
		return 0, Error(rc)
	}
	return int(rc), nil
}

// SockName returns the address of socket i (0 <= i < NumSockets).
func (s *Server) SockName(i int) (Addr, error) {
	if i < 0 {
		return Addr{}, EINVAL
	}
	return readSockaddr(func(a, n unsafe.Pointer) int32 { return s.raw().ServerSockname(s.id, uintptr(i), a, n) })
}

// Close stops accepting and closes the listening sockets; open
// connections stay. Closing twice does nothing.
func (s *Server) Close() error {
	if err := check(s.raw().ServerClose(s.id)); err != nil {
		return err
	}
	s.dropKey()
	return nil
}

// Release closes the server and drops its id (ll_release); the Server must
// not be used afterwards. Releasing twice does nothing.
func (s *Server) Release() error {
	if s.id == 0 {
		return nil
	}
	if err := check(s.raw().Release(s.id)); err != nil {
		return err
	}
	s.id = 0
	s.dropKey()
	return nil
}

// dropKey frees the accept entry once no accepted connection can still
// need it: connections accepted before the close have their ConnectionMade
// in the delivery under way (if any), so the entry goes in a later callback.
func (s *Server) dropKey() {
	key := s.key
	if key == 0 {
		return
	}
	s.key = 0
	if _, err := s.loop.CallSoon(func() { removeEntry(key) }); err != nil {
		removeEntry(key) // a closed loop delivers nothing more
	}
}
