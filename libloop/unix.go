// SPDX-License-Identifier: MIT

package libloop

import "golang.org/x/sys/unix"

// DialUnix connects to the Unix stream socket at path ("@name": an
// abstract name on Linux); done runs as for DialTCP.
func (l *Loop) DialUnix(path string, proto Protocol, done DialFunc) error {
	_, err := l.dialUnix(path, proto, done)
	return err
}

// dialUnix starts DialUnix's connect and returns it, for
// DialUnixContext and DialUnixFor to abort.
func (l *Loop) dialUnix(path string, proto Protocol, done DialFunc) (*dialer, error) {
	if l.closed.Load() {
		return nil, ECLOSED
	}
	if done == nil || !validUnixPath(path) {
		return nil, EINVAL
	}
	d := &dialer{loop: l, proto: proto, done: done, unixSA: &unix.SockaddrUnix{Name: path}}
	if _, err := l.CallSoon(d.next); err != nil {
		return nil, err
	}
	return d, nil
}

// ListenUnix listens on a Unix stream socket at path ("@name": abstract on
// Linux). A stale socket file left at path is removed first, as asyncio's
// create_unix_server does; any other file there is EADDRINUSE.
func (l *Loop) ListenUnix(path string, backlog int, proto Protocol) (*Server, error) {
	if l.closed.Load() {
		return nil, ECLOSED
	}
	if !validUnixPath(path) || backlog < 0 {
		return nil, EINVAL
	}
	if backlog == 0 {
		backlog = 100
	}
	if path[0] != '@' {
		var st unix.Stat_t
		if unix.Stat(path, &st) == nil && st.Mode&unix.S_IFMT == unix.S_IFSOCK {
			unix.Unlink(path)
		}
	}
	fd, err := newSocket(unix.AF_UNIX, unix.SOCK_STREAM)
	if err != nil {
		return nil, err
	}
	if err := unix.Bind(fd, &unix.SockaddrUnix{Name: path}); err != nil {
		unix.Close(fd)
		return nil, err
	}
	s := l.newServer(proto)
	if err := s.listenOn(fd, backlog, false); err != nil {
		unix.Close(fd)
		return nil, err
	}
	return s, nil
}

// validUnixPath reports whether path fits a struct sockaddr_un: a longer
// one is the caller's mistake (EINVAL at once), not a connect that fails
// later with the kernel's -EINVAL.
func validUnixPath(path string) bool {
	var sun unix.RawSockaddrUnix
	return path != "" && len(path) <= len(sun.Path)
}
