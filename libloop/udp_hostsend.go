// SPDX-License-Identifier: MIT

package libloop

// Datagrams sent by the host: while a datagram transport's write gate is
// open (DirectWritable, writegate.go: open, nothing queued), a host may make
// a datagram's one sendto itself, or one sendmmsg of several (capi's C
// path, cloop/udpsend.c), without entering the core. The kernel's answer decides what follows:
//
//   - taken: nothing; the gate stays open.
//   - would block (EAGAIN, ENOBUFS, EINTR): the host hands the datagram to
//     SendTo, which tries once more and queues a copy (the gate was open:
//     nothing is ahead of it).
//   - any other error: the host hands the error to HostSendFailed, which
//     reports it as SendTo would have (one ErrorReceived, asyncio's
//     error_received), and the datagram is dropped. The host must not try
//     the datagram again: the error may be a one-shot (an ICMP
//     ECONNREFUSED on a connected socket) that the first try consumed.

// HostSendFailed reports the error of a datagram the host sent on t while
// its write gate was open: err is the kernel's error (a unix.Errno) other
// than a would-block, reported as one ErrorReceived event exactly as
// SendTo's own send reports it. EINVAL if t is not an open datagram
// transport (the gate was not open: the host must not have sent).
func (t *Transport) HostSendFailed(err error) error {
	if t.kind != Datagram || t.state != tOpen || err == nil || sendWouldBlock(err) {
		return EINVAL
	}
	t.sendFailed(err)
	return nil
}
