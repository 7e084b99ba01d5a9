/* SPDX-License-Identifier: MIT */
/* The write fast path: the first try of a write on the loop's thread to
 * an open stream socket with nothing buffered is a send from here, without
 * entering Go. It is not a second write path: when the kernel does not
 * take all of it (a partial send, EAGAIN, an error), or the slot's direct
 * flag is 0, what is left goes to Go's one write path, Transport.Write
 * (ll__transport_write_go, ll__transport_write_async_size_go), which
 * tries it once more and buffers the rest, or ends the transport on the
 * error. The flag is Go's write gate (libloop/writegate.go), so the rest
 * is buffered behind nothing. A datagram transport's write is one sendto
 * (udpsend.c). */
#include <sys/socket.h>
#include "cloop.h"

#ifdef __linux__
/* Called before each of the fast path's sends if the program defines it:
 * the tests count the sends made from C with it (tests/c/send_counter.h),
 * since the send is a raw system call no libc wrapper sees. A weak
 * reference: NULL in any other program, a load and a branch a write. */
extern void ll__count_direct_send(void) __attribute__((weak));
#endif

/* Send what a direct slot's socket takes now. Returns 1 when all of it
 * went; otherwise *data and *len are what is left for Go, which buffers it
 * behind nothing (the flag said nothing was buffered) or ends the
 * transport on an error, as a write through Go does. */
static inline int send_direct(const ll__proto *p, const void **data, size_t *len) {
#ifdef __linux__
    if (ll__count_direct_send != NULL)
        ll__count_direct_send();
    long n = ll__send_now(p->fd, *data, *len); /* -errno: Go's write meets it again */
#else
    ssize_t n = send(p->fd, *data, *len, MSG_NOSIGNAL);
#endif
    if (n == (ssize_t)*len)
        return 1;
    if (n > 0) {
        *data = (const char *)*data + n;
        *len -= (size_t)n;
    }
    return 0;
}

/* A write on the loop's thread to an open stream socket with nothing
 * buffered: its first try is sent here, without entering Go; the rest, and
 * any other write, goes to Go's Write. */
int ll_transport_write(ll_transport t, const void *data, size_t len) {
    if (len > 0 && data != NULL) {
        const ll__proto *p = ll__direct_slot(t);
        if (p != NULL && p->direct == LL__DIRECT_STREAM && send_direct(p, &data, &len))
            return 0;
        if (p != NULL && p->direct == LL__DIRECT_DGRAM) /* a datagram: one sendto (udpsend.c) */
            return ll__udp_send_direct(t, p, data, len, NULL, 0);
    }
    return ll__transport_write_go(t, (void *)data, len);
}

/* asyncio's write (a binding's): the same fast path; when the kernel takes
 * it all the buffer stays empty (*buffered 0, result 0: not paused). */
int ll_transport_write_async_size(ll_transport t, const void *data, size_t len, size_t *buffered) {
    if (len > 0 && data != NULL) {
        const ll__proto *p = ll__direct_slot(t);
        if (p != NULL && p->direct == LL__DIRECT_STREAM && send_direct(p, &data, &len)) {
            if (buffered != NULL)
                *buffered = 0;
            return 0;
        }
    }
    return ll__transport_write_async_size_go(t, data, len, buffered);
}

/* ll_transport_write_async_size with its two results in one int64, so a
 * ctypes binding makes a 3-argument call with no out-parameter (ctypes'
 * POINTER argument and the size object it fills cost ~170 ns a write in
 * Python, bench/python/README.md). A negative result is the error code
 * (the buffer's size is then not reported); otherwise bit 0 is the status
 * (1: paused) and the rest is the buffer's size. */
int64_t ll_transport_write_async_packed(ll_transport t, const void *data, size_t len) {
    if (len > 0 && data != NULL) {
        const ll__proto *p = ll__direct_slot(t);
        if (p != NULL && p->direct == LL__DIRECT_STREAM && send_direct(p, &data, &len))
            return 0;
    }
    size_t buffered = 0;
    int rc = ll__transport_write_async_size_go(t, data, len, &buffered);
    if (rc < 0)
        return rc;
    if (buffered > (size_t)(INT64_MAX >> 1))
        buffered = (size_t)(INT64_MAX >> 1); /* (no buffer gets near 2^62 bytes) */
    return (int64_t)buffered << 1 | (rc & 1);
}

