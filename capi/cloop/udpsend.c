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
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* sendmmsg */
#endif
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

#ifdef __linux__
/* Datagrams per sendmmsg (as the Go send's udpBatch). */
#define SENDMANY_BATCH 32

/* Whether every record of d is well-formed for the fast path; any other
 * goes to Go, whose checks give the code (nothing sent). */
static int records_ok(const ll_datagram *d, size_t n) {
    for (size_t i = 0; i < n; i++) {
        if ((d[i].data == NULL && d[i].len > 0) || d[i].len > (size_t)1 << 40 ||
            (d[i].addr != NULL && (d[i].addrlen == 0 || d[i].addrlen > sizeof(struct sockaddr_un))))
            return 0;
    }
    return 1;
}

/* ll_udp_sendmany: while the slot's flag is LL__DIRECT_DGRAM, sendmmsg
 * from C, SENDMANY_BATCH a call. A would-block hands what is left to Go
 * (SendMany queues it, behind nothing); a record's own error (sendmmsg
 * fails on the first of a call) goes to Go's HostSendFailed and the record
 * is dropped, the rest go on, as SendMany does. sendmmsg that stops early
 * having sent some drops the error of the one it stopped at: the next call
 * starts there and learns it. */
int ll_udp_sendmany(ll_transport t, const ll_datagram *d, size_t n, int flags) {
    if (flags != 0 || d == NULL || n == 0 || n > (size_t)1 << 24 || !records_ok(d, n))
        return ll__udp_sendmany_go(t, d, n, flags);
    const ll__proto *p = ll__direct_slot(t);
    if (p == NULL || p->direct != LL__DIRECT_DGRAM)
        return ll__udp_sendmany_go(t, d, n, flags);
    struct mmsghdr msgs[SENDMANY_BATCH];
    struct iovec iov[SENDMANY_BATCH];
    size_t i = 0;
    while (i < n) {
        unsigned k = n - i < SENDMANY_BATCH ? (unsigned)(n - i) : SENDMANY_BATCH;
        for (unsigned j = 0; j < k; j++) {
            const ll_datagram *r = &d[i + j];
            iov[j].iov_base = (void *)r->data;
            iov[j].iov_len = r->len;
            msgs[j].msg_hdr = (struct msghdr){
                .msg_name = (void *)r->addr,
                .msg_namelen = r->addr != NULL ? r->addrlen : 0,
                .msg_iov = &iov[j],
                .msg_iovlen = 1,
            };
        }
        int sent = sendmmsg(p->fd, msgs, k, MSG_NOSIGNAL);
        if (sent > 0) {
            i += (size_t)sent;
            continue;
        }
        int e = errno;
        if (e == EAGAIN || e == EWOULDBLOCK || e == ENOBUFS || e == EINTR)
            return ll__udp_sendmany_go(t, d + i, n - i, 0);
        int rc = ll__udp_send_failed_go(t, e);
        if (rc != 0)
            return rc;
        i++;
        /* Go ran: go on from C only while the gate is still open. */
        p = ll__direct_slot(t);
        if (p == NULL || p->direct != LL__DIRECT_DGRAM)
            return i < n ? ll__udp_sendmany_go(t, d + i, n - i, 0) : 0;
    }
    return 0;
}
#else
/* No sendmmsg: Go sends them one sendto each. */
int ll_udp_sendmany(ll_transport t, const ll_datagram *d, size_t n, int flags) {
    return ll__udp_sendmany_go(t, d, n, flags);
}
#endif
