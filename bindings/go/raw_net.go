// SPDX-License-Identifier: MIT

package libloop

import "unsafe"

// RawNet holds the raw calls of include/libloop/transport.h and udp.h, embedded in Raw
// (so raw.TransportWrite works). The conventions are Raw's: ids are uint64,
// pointers unsafe.Pointer (C memory: CBuf.Ptr(), Out.Ptr(), or nil for
// NULL), C function addresses and void * args uintptr, size_t uintptr.
// ll_protocol_fn arguments take ProtocolFnPtr() with a RegisterProtocolFn
// key (or 0 for NULL: the loop's batch sink); ll_event_batch_fn takes
// EventBatchPtr() with a RegisterEventBatch key. Events are read from the C
// ll_event with Event (protocol.go).
type RawNet struct {
	SetEventBatch func(loop uint64, fn, arg uintptr) int32 // ll_loop_set_event_batch
	EventWithhold func(ev unsafe.Pointer) int32            // ll_event_withhold

	TCPConnect    func(loop uint64, host unsafe.Pointer, port int32, fn, arg uintptr, out unsafe.Pointer) int32                 // ll_tcp_connect
	TCPConnectEx  func(loop uint64, opts unsafe.Pointer, fn, arg uintptr, out unsafe.Pointer) int32                             // ll_tcp_connect_ex
	TCPListenEx   func(loop uint64, opts unsafe.Pointer, fn, arg uintptr, out unsafe.Pointer) int32                             // ll_tcp_listen_ex
	UDPOpenEx     func(loop uint64, opts unsafe.Pointer, fn, arg uintptr, out unsafe.Pointer) int32                             // ll_udp_open_ex
	TCPListen     func(loop uint64, host unsafe.Pointer, port, backlog, flags int32, fn, arg uintptr, out unsafe.Pointer) int32 // ll_tcp_listen
	UnixConnect   func(loop uint64, path unsafe.Pointer, fn, arg uintptr, out unsafe.Pointer) int32                             // ll_unix_connect
	UnixListen    func(loop uint64, path unsafe.Pointer, backlog int32, fn, arg uintptr, out unsafe.Pointer) int32              // ll_unix_listen
	TransportOpen func(loop uint64, fd, kind int32, fn, arg uintptr, out unsafe.Pointer) int32                                  // ll_transport_open

	TransportSetProtocol          func(t uint64, fn, arg uintptr) int32                                                     // ll_transport_set_protocol
	TransportWrite                func(t uint64, data unsafe.Pointer, n uintptr) int32                                      // ll_transport_write
	TransportWriteAsync           func(t uint64, data unsafe.Pointer, n uintptr) int32                                      // ll_transport_write_async
	TransportWriteAsyncSize       func(t uint64, data unsafe.Pointer, n uintptr, buffered unsafe.Pointer) int32             // ll_transport_write_async_size
	TransportWriteAsyncPacked     func(t uint64, data unsafe.Pointer, n uintptr) int64                                      // ll_transport_write_async_packed
	TransportWriteEOF             func(t uint64) int32                                                                      // ll_transport_write_eof
	TransportCanWriteEOF          func(t uint64) int32                                                                      // ll_transport_can_write_eof
	TransportClose                func(t uint64) int32                                                                      // ll_transport_close
	TransportAbort                func(t uint64) int32                                                                      // ll_transport_abort
	TransportPauseReading         func(t uint64) int32                                                                      // ll_transport_pause_reading
	TransportResumeReading        func(t uint64) int32                                                                      // ll_transport_resume_reading
	TransportIsReading            func(t uint64) int32                                                                      // ll_transport_is_reading
	TransportSetWriteBufferLimits func(t uint64, high, low uintptr) int32                                                   // ll_transport_set_write_buffer_limits
	TransportGetWriteBufferSize   func(t uint64, out unsafe.Pointer) int32                                                  // ll_transport_get_write_buffer_size
	TransportIsClosing            func(t uint64) int32                                                                      // ll_transport_is_closing
	TransportFD                   func(t uint64) int32                                                                      // ll_transport_fd
	TransportSockname             func(t uint64, addr, n unsafe.Pointer) int32                                              // ll_transport_sockname
	TransportPeername             func(t uint64, addr, n unsafe.Pointer) int32                                              // ll_transport_peername
	TransportSendfile             func(t uint64, fd int32, offset, count int64, out unsafe.Pointer) int32                   // ll_transport_sendfile
	TransportSendto               func(t uint64, data unsafe.Pointer, n uintptr, addr unsafe.Pointer, addrlen uint32) int32 // ll_transport_sendto

	ServerOpen       func(loop uint64, fd int32, fn, arg uintptr, out unsafe.Pointer) int32 // ll_server_open
	ServerClose      func(s uint64) int32                                                   // ll_server_close
	ServerPort       func(s uint64, port unsafe.Pointer) int32                              // ll_server_port
	ServerNumSockets func(s uint64) int32                                                   // ll_server_num_sockets
	ServerSockname   func(s uint64, i uintptr, addr, n unsafe.Pointer) int32                // ll_server_sockname

	UDPSendmany              func(t uint64, d unsafe.Pointer, n uintptr, flags int32) int32                                                                                              // ll_udp_sendmany
	UDPOpen                  func(loop uint64, localHost unsafe.Pointer, localPort int32, remoteHost unsafe.Pointer, remotePort, flags int32, fn, arg uintptr, out unsafe.Pointer) int32 // ll_udp_open
	TTYOpen                  func(loop uint64, fd int32, fn, arg uintptr, out unsafe.Pointer) int32                                                                                      // ll_tty_open
	TTYSetMode               func(t uint64, mode int32) int32                                                                                                                            // ll_tty_set_mode
	TTYGetWinsize            func(t uint64, cols, rows unsafe.Pointer) int32                                                                                                             // ll_tty_get_winsize
	TTYResetMode             func() int32                                                                                                                                                // ll_tty_reset_mode
	UDPSetBroadcast          func(t uint64, on int32) int32                                                                                                                              // ll_udp_set_broadcast
	UDPSetTTL                func(t uint64, ttl int32) int32                                                                                                                             // ll_udp_set_ttl
	UDPSetMulticastTTL       func(t uint64, ttl int32) int32                                                                                                                             // ll_udp_set_multicast_ttl
	UDPSetMulticastLoop      func(t uint64, on int32) int32                                                                                                                              // ll_udp_set_multicast_loop
	UDPSetMulticastInterface func(t uint64, iface unsafe.Pointer) int32                                                                                                                  // ll_udp_set_multicast_interface
	UDPSetMembership         func(t uint64, group, iface unsafe.Pointer, op int32) int32                                                                                                 // ll_udp_set_membership
	UDPSetSourceMembership   func(t uint64, group, iface, source unsafe.Pointer, op int32) int32                                                                                         // ll_udp_set_source_membership
	GetAddrInfo              func(loop uint64, host, service unsafe.Pointer, family, socktype, flags int32, out unsafe.Pointer) int32                                                    // ll_getaddrinfo
	GetNameInfo              func(loop uint64, addr unsafe.Pointer, addrlen uint32, flags int32, out unsafe.Pointer) int32                                                               // ll_getnameinfo
}

func (r *RawNet) symbols() []struct {
	name string
	fptr any
} {
	return []struct {
		name string
		fptr any
	}{
		{"ll_loop_set_event_batch", &r.SetEventBatch},
		{"ll_event_withhold", &r.EventWithhold},
		{"ll_tcp_connect", &r.TCPConnect},
		{"ll_tcp_connect_ex", &r.TCPConnectEx},
		{"ll_tcp_listen_ex", &r.TCPListenEx},
		{"ll_udp_open_ex", &r.UDPOpenEx},
		{"ll_tcp_listen", &r.TCPListen},
		{"ll_unix_connect", &r.UnixConnect},
		{"ll_unix_listen", &r.UnixListen},
		{"ll_transport_open", &r.TransportOpen},
		{"ll_transport_set_protocol", &r.TransportSetProtocol},
		{"ll_transport_write", &r.TransportWrite},
		{"ll_transport_write_async", &r.TransportWriteAsync},
		{"ll_transport_write_async_size", &r.TransportWriteAsyncSize},
		{"ll_transport_write_async_packed", &r.TransportWriteAsyncPacked},
		{"ll_transport_write_eof", &r.TransportWriteEOF},
		{"ll_transport_can_write_eof", &r.TransportCanWriteEOF},
		{"ll_transport_close", &r.TransportClose},
		{"ll_transport_abort", &r.TransportAbort},
		{"ll_transport_pause_reading", &r.TransportPauseReading},
		{"ll_transport_resume_reading", &r.TransportResumeReading},
		{"ll_transport_is_reading", &r.TransportIsReading},
		{"ll_transport_set_write_buffer_limits", &r.TransportSetWriteBufferLimits},
		{"ll_transport_get_write_buffer_size", &r.TransportGetWriteBufferSize},
		{"ll_transport_is_closing", &r.TransportIsClosing},
		{"ll_transport_fd", &r.TransportFD},
		{"ll_transport_sockname", &r.TransportSockname},
		{"ll_transport_peername", &r.TransportPeername},
		{"ll_transport_sendfile", &r.TransportSendfile},
		{"ll_transport_sendto", &r.TransportSendto},
		{"ll_server_open", &r.ServerOpen},
		{"ll_server_close", &r.ServerClose},
		{"ll_server_port", &r.ServerPort},
		{"ll_server_num_sockets", &r.ServerNumSockets},
		{"ll_server_sockname", &r.ServerSockname},
		{"ll_udp_open", &r.UDPOpen},
		{"ll_udp_sendmany", &r.UDPSendmany},
		{"ll_tty_open", &r.TTYOpen},
		{"ll_tty_set_mode", &r.TTYSetMode},
		{"ll_tty_get_winsize", &r.TTYGetWinsize},
		{"ll_tty_reset_mode", &r.TTYResetMode},
		{"ll_udp_set_broadcast", &r.UDPSetBroadcast},
		{"ll_udp_set_ttl", &r.UDPSetTTL},
		{"ll_udp_set_multicast_ttl", &r.UDPSetMulticastTTL},
		{"ll_udp_set_multicast_loop", &r.UDPSetMulticastLoop},
		{"ll_udp_set_multicast_interface", &r.UDPSetMulticastInterface},
		{"ll_udp_set_membership", &r.UDPSetMembership},
		{"ll_udp_set_source_membership", &r.UDPSetSourceMembership},
		{"ll_getaddrinfo", &r.GetAddrInfo},
		{"ll_getnameinfo", &r.GetNameInfo},
	}
}
