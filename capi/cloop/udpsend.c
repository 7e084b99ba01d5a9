/* SPDX-License-Identifier: MIT */
/* The datagram send fast path: on the loop's thread, a datagram for an
 * open datagram transport with nothing queued is sent with one sendto from
 * here, without entering Go. It is not a second send path: C decides
 * nothing. The slot's flag (LL__DIRECT_DGRAM) is the core's write gate
 * (libloop/writegate.go, udp_hostsend.go), and the kernel's answer goes to
 * Go as the core's own send would have taken it:
 *   - would block (EAGAIN, ENOBUFS, EINTR): the datagram goes to Go's
 *     SendTo, which tries it once more and queues a copy, behind nothing;
 *   - any other error: the errno goes to Go (HostSendFailed), which
 *     reports it once as error_received. The datagram is not tried again:
 *     the error may be a one-shot (an ICMP ECONNREFUSED on a connected
 *     socket) that this try consumed, and a second try would lose it.
 * Bad input (NULL data, a bad address length) never takes the fast path:
 * Go's checks give their codes, as before. */
#include <errno.h>
#include <sys/socket.h>
#include <sys/un.h>
#include "cloop.h"

/* One sendto of a whole datagram on a slot whose flag is LL__DIRECT_DGRAM
 * (cloop.h); the result is what ll_transport_sendto returns. */
int ll__udp_send_direct(uint64_t t, const ll__proto *p, const void *data, size_t len, const void *addr,
                         uint32_t addrlen) {
    if (sendto(p->fd, data, len, MSG_NOSIGNAL, (const struct sockaddr *)addr, addrlen) >= 0)
        return 0; /* a datagram is sent whole or not at all */
    int e = errno;
    if (e == EAGAIN || e == EWOULDBLOCK || e == ENOBUFS || e == EINTR)
        return ll__transport_sendto_go(t, data, len, addr, addrlen);
    return ll__udp_send_failed_go(t, e);
}

/* ll_transport_sendto: the fast path for well-formed arguments (data for
 * len, an address no longer than the largest the core takes: a
 * sockaddr_un's length is below unix.RawSockaddrAny's), else Go. */
int ll_transport_sendto(ll_transport t, const void *data, size_t len, const void *addr, uint32_t addrlen) {
    if ((data != NULL || len == 0) && len <= (size_t)1 << 40 &&
        (addr == NULL || (addrlen > 0 && addrlen <= sizeof(struct sockaddr_un)))) {
        const ll__proto *p = ll__direct_slot(t);
        if (p != NULL && p->direct == LL__DIRECT_DGRAM)
            return ll__udp_send_direct(t, p, data, len, addr, addr != NULL ? addrlen : 0);
    }
    return ll__transport_sendto_go(t, data, len, addr, addrlen);
}
