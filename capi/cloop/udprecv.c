/* SPDX-License-Identifier: MIT */
/* The C datagram path (udprecv.h): recvmmsg into C's slots, each datagram
 * to the transport's C protocol as it is read. */
#ifdef __linux__
#define _GNU_SOURCE /* recvmmsg */
#include <errno.h>
#include <sys/socket.h>
#endif
#include <stdlib.h>
#include "udprecv.h"

#ifdef __linux__
/* The slots are spaced by a little more than LL__UDP_SLOT, so that their
 * heads do not all fall in the same cache set. */
#define SLOT_STRIDE (LL__UDP_SLOT + 256)

typedef struct {
    ll__udprecv out; /* first: the pointer Go holds is this one's */
    struct mmsghdr msgs[LL__UDP_BATCH];
    struct iovec iov[LL__UDP_BATCH];
    /* sockaddr_storage: 8-byte aligned, so a protocol may read an address
     * in place as any struct sockaddr_*. */
    struct sockaddr_storage names[LL__UDP_BATCH];
    unsigned char *stage;
} udprecv;

ll__udprecv *ll__udprecv_new(void) {
    udprecv *u = calloc(1, sizeof *u);
    if (u == NULL)
        return NULL;
    u->stage = malloc((size_t)LL__UDP_BATCH * SLOT_STRIDE);
    if (u->stage == NULL) {
        free(u);
        return NULL;
    }
    for (int i = 0; i < LL__UDP_BATCH; i++) {
        u->iov[i].iov_base = u->stage + (size_t)i * SLOT_STRIDE;
        u->iov[i].iov_len = LL__UDP_SLOT;
        u->msgs[i].msg_hdr.msg_iov = &u->iov[i];
        u->msgs[i].msg_hdr.msg_iovlen = 1;
        u->msgs[i].msg_hdr.msg_name = &u->names[i];
    }
    return &u->out;
}

void ll__udprecv_free(ll__udprecv *out) {
    udprecv *u = (udprecv *)out;
    if (u != NULL)
        free(u->stage);
    free(u);
}

/* Datagram i of the last recvmmsg as an event's data and address (NULL
 * when empty, as the Go read gives them). */
static inline void dgram_at(const udprecv *u, int i, ll__udp_dgram *d) {
    uint32_t alen = u->msgs[i].msg_hdr.msg_namelen;
    if (alen > sizeof u->names[i])
        alen = sizeof u->names[i];
    d->len = u->msgs[i].msg_len;
    d->data = d->len ? u->iov[i].iov_base : NULL;
    d->addrlen = alen;
    d->addr = alen ? (const void *)&u->names[i] : NULL;
}

void ll__udp_recv(uint64_t loop, uintptr_t state, uintptr_t proto, uint64_t id, int fd, int evfd, int max,
                  uintptr_t pending) {
    udprecv *u = (udprecv *)state;
    volatile ll__proto *p = (volatile ll__proto *)proto;
    ll__batch_ctx saved = ll__batch_enter(loop, (ll__pending *)pending);
    int got = 0;
    u->out.err = 0;
    u->out.nrest = 0;
    /* held is checked before every read: a protocol's close sets it before
     * the fd is closed, so no recvmmsg is made on a closed (or reused) fd. */
    while (got < max && p->held == 0) {
        int want = max - got < LL__UDP_BATCH ? max - got : LL__UDP_BATCH;
        for (int i = 0; i < want; i++)
            u->msgs[i].msg_hdr.msg_namelen = sizeof u->names[i];
        int r = recvmmsg(fd, u->msgs, (unsigned)want, MSG_DONTWAIT, NULL);
        if (r < 0) {
            if (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR)
                u->out.err = errno; /* an ICMP error; recvmmsg reports one only before any datagram */
            break;
        }
        got += r;
        for (int i = 0; i < r; i++) {
            /* Re-read the slot: an earlier datagram's protocol may have
             * paused, closed or aborted the transport or changed its
             * protocol. */
            uintptr_t fn = p->fn;
            if (p->held != 0 || fn == 0) {
                for (int k = i; k < r; k++)
                    dgram_at(u, k, &u->out.rest[u->out.nrest++]);
                goto done;
            }
            ll__udp_dgram d;
            dgram_at(u, i, &d);
            ll_event ev = {
                .kind = LL_DATAGRAM_RECEIVED,
                .fd = evfd,
                .transport = id,
                .data = d.data,
                .len = d.len,
                .addr = d.addr,
                .addrlen = d.addrlen,
                .arg = (void *)p->arg,
            };
            ((ll_protocol_fn)fn)(loop, &ev, ev.arg);
        }
        if (r < want)
            break; /* drained: a further call would only say EAGAIN */
    }
done:
    u->out.read = got;
    ll__batch_leave(saved);
}
#else
ll__udprecv *ll__udprecv_new(void) { return NULL; /* no recvmmsg: Go reads */ }
void ll__udprecv_free(ll__udprecv *u) { (void)u; }
void ll__udp_recv(uint64_t loop, uintptr_t state, uintptr_t proto, uint64_t id, int fd, int evfd, int max,
                  uintptr_t pending) {
    (void)loop, (void)proto, (void)id, (void)fd, (void)evfd, (void)max, (void)pending;
    ((ll__udprecv *)state)->read = 0;
}
#endif
