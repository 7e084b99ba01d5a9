// SPDX-License-Identifier: MIT

package libloop

import "golang.org/x/sys/unix"

// OpenTransport adopts an fd the host already has (asyncio's
// connect_read_pipe / connect_write_pipe / connect_accepted_socket): it is
// made non-blocking and close-on-exec, and the transport owns it from then
// on. A Stream fd may be a socket or any fd that reads and writes (a pty);
// a Datagram fd must be a datagram socket. A PipeWrite transport on a FIFO
// or a socket ends when its reader goes away; on a character device (a
// tty) it ends only by a write error, Close or Abort.
func (l *Loop) OpenTransport(fd int, kind TransportKind, proto Protocol) (*Transport, error) {
	if l.closed.Load() {
		return nil, ECLOSED
	}
	if kind < Stream || kind > Datagram {
		return nil, EINVAL
	}
	if fd < 0 {
		return nil, sysEBADF
	}
	if _, err := unix.FcntlInt(uintptr(fd), unix.F_GETFD, 0); err != nil {
		return nil, err
	}
	typ, err := unix.GetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_TYPE)
	socket := err == nil
	if kind == Datagram && typ != unix.SOCK_DGRAM {
		return nil, EINVAL
	}
	if w := l.fds.get(int32(fd)); w != nil {
		return nil, sysEBUSY // watched by add_reader or owned by a transport
	}
	if err := unix.SetNonblock(fd, true); err != nil {
		return nil, err
	}
	unix.CloseOnExec(fd)
	if socket && kind == Stream {
		if sa, err := unix.Getsockname(fd); err == nil {
			switch sa.(type) {
			case *unix.SockaddrInet4, *unix.SockaddrInet6:
				unix.SetsockoptInt(fd, unix.IPPROTO_TCP, unix.TCP_NODELAY, 1)
			}
		}
	}
	t := l.newTransport(fd, kind, socket, proto)
	if kind == PipeWrite && !socket {
		var st unix.Stat_t
		t.peerWatch = unix.Fstat(fd, &st) == nil && st.Mode&unix.S_IFMT == unix.S_IFIFO
	}
	if err := t.start(); err != nil {
		t.loop.unwatchOwner(fd, t)
		return nil, err
	}
	return t, nil
}
