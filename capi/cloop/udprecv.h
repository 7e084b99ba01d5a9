/* SPDX-License-Identifier: MIT */
/*
 * udprecv.h — the C datagram path (udprecv.c): a datagram transport's
 * readiness served in C, recvmmsg into C's own slots and the transport's
 * C protocol called for each datagram, in the crossing Go makes to ask
 * for it. Internal, like cloop.h.
 *
 * Go decides when (libloop/udp_hostread.go: outside debug mode, for an
 * open transport whose reads may be delivered, after the events queued
 * before); capi checks that the protocol slot holds a C function and
 * calls ll__udp_recv. C only reads and calls: it stops at the first
 * datagram whose transport's slot says held (a pause, close or abort made
 * by a protocol meanwhile; capi's ReadsChanged sets it before any fd is
 * closed) or whose protocol became the batch sink, and leaves that one
 * and the rest it read in rest[] for Go, which queues them as its own
 * read would have.
 */
#ifndef LIBLOOP_UDPRECV_H
#define LIBLOOP_UDPRECV_H

#include <stdint.h>
#include "cloop.h"

/* Datagrams per recvmmsg (as the Go read's udpBatch). */
#define LL__UDP_BATCH 32
/* What one datagram may fill: UDP's largest payload (65,507 bytes on IPv4,
 * 65,527 on IPv6) fits, so none is truncated (as the Go read's udpSlot). */
#define LL__UDP_SLOT (64 << 10)

/* A datagram read and not delivered, for Go. */
typedef struct ll__udp_dgram {
    const void *data;
    const void *addr;
    uint32_t len;
    uint32_t addrlen;
} ll__udp_dgram;

/* A loop's state for the path: the outcome of the last ll__udp_recv and
 * the datagrams it left to Go; the system call's records and the slots
 * follow in C's part (udprecv.c). */
typedef struct ll__udprecv {
    int32_t read;  /* out: datagrams read */
    int32_t err;   /* out: errno of the recvmmsg that failed (not EAGAIN/EINTR), else 0 */
    int32_t nrest; /* out: datagrams read and not delivered, in rest[] */
    ll__udp_dgram rest[LL__UDP_BATCH];
} ll__udprecv;

/* A loop's state (its slots, 2 MiB of address space, resident only as
 * datagrams touch it), or NULL if memory ran out or the system has no
 * recvmmsg (then Go reads); freed with ll__udprecv_free. */
ll__udprecv *ll__udprecv_new(void);
void ll__udprecv_free(ll__udprecv *u);

/* Serve a readiness of the datagram transport id (socket fd, protocol slot
 * proto, whose events carry fd evfd): read up to max datagrams and call
 * proto's function for each, as a batch of loop (pending: its record).
 * The outcome is in *u. */
void ll__udp_recv(uint64_t loop, uintptr_t u, uintptr_t proto, uint64_t id, int fd, int evfd, int max,
                  uintptr_t pending);

#endif
