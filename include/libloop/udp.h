/* SPDX-License-Identifier: MIT */
/*
 * libloop/udp.h — datagram transports: opening UDP sockets, sending one
 * datagram or many, and their socket options (libuv's uv_udp_t and
 * uv_udp_set_*). Included by libloop.h after libloop/transport.h, whose
 * events and transports they are; do not include it alone. docs/udp.md
 * has the details and an example.
 */
#ifndef LIBLOOP_UDP_H
#define LIBLOOP_UDP_H

#ifdef __cplusplus
extern "C" {
#endif

/* ---- Datagrams ---------------------------------------------------------- */

/**
 * Open a UDP transport (asyncio's create_datagram_endpoint): bound to
 * local_host:local_port when either is given, connected to
 * remote_host:remote_port when remote_host is not NULL. At least one side
 * is required. Addresses and "localhost" need no lookup; a host name is
 * looked up in place only while the loop is not running, and is
 * LL_ENEEDASYNC while it runs (ll_udp_open_ex resolves on the resolver
 * pool). flags: 0 or LL_REUSE_PORT.
 * Datagrams arrive as LL_DATAGRAM_RECEIVED; send errors and ICMP errors on
 * a connected socket as LL_ERROR_RECEIVED (the transport stays open).
 * Linux reads them with recvmmsg, up to 64 per readiness, in one crossing:
 * to a protocol fn each as it is read (a pause, close or abort it makes
 * takes effect for the next one), to a batch sink all in one batch; each
 * arrives whole (up to UDP's 65,507 bytes).
 * @return 0, -EADDRINUSE, LL_ENONAME, LL_ENEEDASYNC, LL_EINVAL, LL_EBADHANDLE, LL_ECLOSED.
 */
int ll_udp_open(ll_loop loop, const char *local_host, int local_port, const char *remote_host, int remote_port,
                int flags, ll_protocol_fn fn, void *arg, ll_transport *out);

/** What ll_udp_open_ex opens: ll_udp_open's arguments by name. Zero it and set size first. */
typedef struct ll_udp_options {
    uint32_t size;           /**< sizeof(ll_udp_options) */
    int local_port;          /**< 0: any */
    const char *local_host;  /**< a name or an address; NULL: the wildcard of the remote's family (or no bind with local_port 0) */
    const char *remote_host; /**< a name or an address to connect to; NULL: not connected */
    int remote_port;
    int flags;               /**< 0 or LL_REUSE_PORT */
} ll_udp_options;

/**
 * ll_udp_open as asyncio's create_datagram_endpoint is: host names are
 * resolved on the resolver pool, never on the loop thread. The future's
 * value is the transport id (its first event, LL_CONNECTION_MADE, reaches
 * fn); it fails with ll_udp_open's errors. Cancelling or releasing the
 * future before it is done closes the socket (fn hears nothing). The
 * strings are copied.
 * @return 0, LL_EINVAL (NULL opts or out; a bad size, port or flags; no
 *         side given), LL_EBADHANDLE, LL_ECLOSED.
 */
int ll_udp_open_ex(ll_loop loop, const ll_udp_options *opts, ll_protocol_fn fn, void *arg, ll_future *out);

/**
 * Send one datagram to addr (a struct sockaddr of addrlen bytes; NULL: the
 * connected peer). What the kernel refuses for now is queued; a failure is
 * reported as LL_ERROR_RECEIVED. Once the transport was lost other than by
 * the host's close or abort, a send returns 0 and is dropped (as
 * ll_transport_write). On a stream transport with addr NULL, the same as
 * ll_transport_write.
 * @return 0, LL_EINVAL (NULL data with len > 0, addrlen too large, an
 *         address on a stream), LL_ECLOSED (after the host's close or
 *         abort), LL_EBADHANDLE.
 */
int ll_transport_sendto(ll_transport t, const void *data, size_t len, const void *addr, uint32_t addrlen);

/** One datagram of ll_udp_sendmany. */
typedef struct ll_datagram {
    const void *data; /**< the bytes; may be NULL when len is 0 */
    size_t len;
    const void *addr; /**< a struct sockaddr of addrlen bytes; NULL: the connected peer */
    uint32_t addrlen;
} ll_datagram;

/**
 * Send n datagrams in order, as n ll_transport_sendto calls would, in one
 * call (libuv's uv_udp_try_send2): on Linux sendmmsg sends up to 32 per
 * system call. The records and the bytes they point to stay the caller's:
 * what the kernel refuses for now is copied into the queue (sent with
 * sendmmsg as the socket drains). A datagram that fails is reported as
 * LL_ERROR_RECEIVED and dropped, and the ones after it still go. flags: 0
 * (reserved).
 * @return 0, LL_EINVAL (d NULL with n > 0, a record sendto would refuse,
 *         nonzero flags, a stream transport; then nothing is sent),
 *         LL_ECLOSED (after the host's close or abort), LL_EBADHANDLE.
 */
int ll_udp_sendmany(ll_transport t, const ll_datagram *d, size_t n, int flags);

/* ---- UDP socket options (libuv's uv_udp_set_*) --------------------------
 * On an open UDP transport of the family it was opened with (ll_udp_open or
 * an adopted LL_DATAGRAM socket). Each returns 0, LL_EINVAL (not a UDP
 * transport; a value out of range; an address that does not parse or is of
 * the other family), LL_ECLOSED (after close or loss), LL_EBADHANDLE, or the
 * kernel's -errno. An interface (iface_addr) is, on IPv4, the interface's
 * address ("127.0.0.1"); on IPv6 an address whose zone names the interface
 * ("::%eth0", "::%2"); NULL or "" lets the kernel choose. */

#define LL_JOIN  1 /**< ll_udp_set_membership / ll_udp_set_source_membership: join the group */
#define LL_LEAVE 2 /**< ll_udp_set_membership / ll_udp_set_source_membership: leave it */

/** Allow sending to broadcast addresses (SO_BROADCAST) when on is nonzero. @return as above. */
int ll_udp_set_broadcast(ll_transport t, int on);

/** Unicast time to live (IPv6: hop limit), 1..255. @return as above. */
int ll_udp_set_ttl(ll_transport t, int ttl);

/** Multicast time to live (IPv6: hop limit), 0..255 (the kernel's default, 1, stays on the local network). @return as above. */
int ll_udp_set_multicast_ttl(ll_transport t, int ttl);

/** Whether this host's members hear the socket's own multicast datagrams (the kernel's default: on). @return as above. */
int ll_udp_set_multicast_loop(ll_transport t, int on);

/** The interface multicast datagrams leave by. @return as above. */
int ll_udp_set_multicast_interface(ll_transport t, const char *iface_addr);

/**
 * Join (LL_JOIN) or leave (LL_LEAVE) a multicast group on an interface.
 * @return as above; joining twice is -EADDRINUSE and leaving a group not
 *         joined -EADDRNOTAVAIL (the kernel's).
 */
int ll_udp_set_membership(ll_transport t, const char *group, const char *iface_addr, int op);

/**
 * Join or leave a group for the datagrams of one source only
 * (source-specific multicast, RFC 4607).
 * @return as ll_udp_set_membership; -EOPNOTSUPP where the system has no
 *         source-specific option.
 */
int ll_udp_set_source_membership(ll_transport t, const char *group, const char *iface_addr, const char *source,
                                 int op);

#ifdef __cplusplus
}
#endif

#endif /* LIBLOOP_UDP_H */
