/* SPDX-License-Identifier: MIT */
/*
 * libloop/transport.h — network I/O: transports and protocols (included by
 * libloop.h; do not include it alone).
 *
 * asyncio's model (transports.py, protocols.py): a transport owns one
 * non-blocking fd. The library reads, writes, buffers and closes it, and
 * tells the transport's protocol what happened through one callback, an
 * ll_protocol_fn, with an ll_event. libuv's names for the same ideas:
 * uv_tcp_t / uv_pipe_t / uv_udp_t are transports; uv_read_cb, uv_close_cb
 * and friends are folded into the event kinds below.
 *
 * Threads: every function here is called on the loop's thread (or while the
 * loop is not running), like ll_call_soon. Protocol callbacks run on the
 * loop thread, inside the loop's iterations, never from inside an ll_*
 * call: an event a call causes (LL_PAUSE_WRITING from ll_transport_write,
 * LL_CONNECTION_LOST from ll_transport_close) arrives in a later callback,
 * as libuv's callbacks do. (asyncio calls pause_writing from inside
 * write(); a binding that needs to know at once uses
 * ll_transport_write_async, whose result says so.)
 *
 * Lifetime: a transport id is valid from its LL_CONNECTION_MADE (or from
 * the call that returned it) until its LL_CONNECTION_LOST callback returns;
 * after that every call with it returns LL_EBADHANDLE. The host does not
 * ll_release transports: close or abort them (ll_release on a transport id
 * is ll_transport_abort, allowed from its own callbacks too). Server ids
 * are released with ll_release (which also closes the server). Releasing
 * the loop closes its transports and servers without further events.
 *
 * Batches: the events of one iteration's reads reach C in one Go->C
 * crossing, however many transports they concern. A language binding that
 * cannot afford one foreign call per event passes a NULL protocol fn and
 * receives arrays of events through ll_loop_set_event_batch.
 *
 * Read events and the calls that stop reading: since every read of an
 * iteration is made before its events are delivered, a callback may pause,
 * close or abort another transport whose bytes were read already. From the
 * call on, that transport gets no LL_DATA_RECEIVED, LL_DATAGRAM_RECEIVED or
 * LL_EOF_RECEIVED (as asyncio, whose pause_reading, close and abort cancel
 * the read callback already queued). What was read for it is dropped after
 * close or abort; after pause it is kept and delivered once
 * ll_transport_resume_reading is called, before anything read later.
 */
#ifndef LIBLOOP_TRANSPORT_H
#define LIBLOOP_TRANSPORT_H

#ifdef __cplusplus
extern "C" {
#endif

/* ---- Events ----------------------------------------------------------- */

#define LL_CONNECTION_MADE   1 /**< first event: the transport is ready (asyncio's connection_made) */
#define LL_DATA_RECEIVED     2 /**< data/len hold received bytes (data_received) */
#define LL_EOF_RECEIVED      3 /**< the peer shut down its side; return 1 to keep the transport open for writing, 0 to close it (eof_received) */
#define LL_CONNECTION_LOST   4 /**< last event, exactly once; code 0 (closed cleanly) or -errno / LL_E* (connection_lost) */
#define LL_PAUSE_WRITING     5 /**< the write buffer rose above the high-water mark (pause_writing) */
#define LL_RESUME_WRITING    6 /**< the write buffer drained to the low-water mark (resume_writing) */
#define LL_DATAGRAM_RECEIVED 7 /**< data/len hold one datagram, addr/addrlen the sender (datagram_received) */
#define LL_ERROR_RECEIVED    8 /**< a datagram send failed or an ICMP error arrived; code is -errno (error_received) */
#define LL_PROCESS_EXITED    9 /**< processes: code is the return code */

/** One thing that happened to a transport. */
typedef struct ll_event {
    int kind;              /**< LL_CONNECTION_MADE ... */
    int code;              /**< LL_CONNECTION_LOST / LL_ERROR_RECEIVED: 0 or -errno / LL_E*; LL_PROCESS_EXITED: return code */
    int fd;                /**< process pipe events: the child's fd (0, 1, 2); else -1 */
    ll_transport transport;
    const void *data;      /**< received bytes: valid only during the callback */
    size_t len;
    const void *addr;      /**< datagrams: the sender's struct sockaddr (8-byte aligned: readable in place), valid only during the callback */
    uint32_t addrlen;
    int result;            /**< batch sinks write their LL_EOF_RECEIVED answer here (see ll_loop_set_event_batch) */
    void *arg;             /**< the transport's protocol arg: lets a batch sink tell, e.g., which server accepted a new transport */
} ll_event;

/**
 * A protocol: called once per event, in the order the events happened on
 * that transport. The return value matters only for LL_EOF_RECEIVED.
 * It may call any ll_* function, on this transport or others.
 */
typedef int (*ll_protocol_fn)(ll_loop loop, const ll_event *ev, void *arg);

/**
 * A batch sink: receives n consecutive events of transports whose protocol
 * fn is NULL, in one call. For each LL_EOF_RECEIVED it sets ev->result (1:
 * keep open, 0: close). Events and their bytes are valid during the call.
 * The array holds no read event of a transport that was paused, closed or
 * aborted before the call; one that the sink's own handling of an earlier
 * event of the array pauses, closes or aborts must not be delivered: the
 * sink sets its kind to 0 instead, and the library then treats it as it
 * treats those it withholds itself (kept for resume_reading, or dropped).
 * Kind 0 means nothing on any other event. ll_event_withhold does that
 * check and the withholding for one event, from the library's own state.
 */
typedef void (*ll_event_batch_fn)(ll_loop loop, ll_event *events, size_t n, void *arg);

/**
 * For a batch sink, just before it handles ev, an event of the array it
 * was given in this call: withhold ev if it is a read event
 * (LL_DATA_RECEIVED, LL_DATAGRAM_RECEIVED, LL_EOF_RECEIVED) of a transport
 * that may not get one now: paused, closing or closed (by the sink's
 * handling of an earlier event of the array, say), or with an earlier read
 * event withheld (none overtakes it). Then ev's kind becomes 0 and the library
 * keeps the event (delivered after ll_transport_resume_reading, before
 * anything read later) or drops it (close, abort), as the batch sink's
 * contract above says. A sink that calls this for each event it reaches
 * need not track which transports its own callbacks stopped.
 * Runs in C on the calling thread: no lookup by id, no entry into the Go
 * runtime, a few loads and a compare (cheap enough to call per event).
 * @return 1: ev is withheld (its kind is 0, now or before: do not deliver
 * it); 0: deliver ev; LL_EINVAL: ev is not an event of the array handed
 * to a batch sink running now on this thread (NULL, a copy, another
 * thread, or after the sink returned).
 */
int ll_event_withhold(ll_event *ev);

/**
 * Route the events of transports that have no protocol fn to fn, in arrays
 * (one call per run of such events). NULL removes it; events with no fn
 * and no sink are dropped (an unanswered EOF closes the transport).
 * @return 0, LL_EBADHANDLE.
 */
int ll_loop_set_event_batch(ll_loop loop, ll_event_batch_fn fn, void *arg);

/* ---- Streams: TCP, Unix sockets, pipes --------------------------------- */

#define LL_REUSE_PORT 1 /**< ll_tcp_listen / ll_udp_open: set SO_REUSEPORT */

#define LL_STREAM     1 /**< ll_transport_open: a connected stream socket, or any fd that reads and writes (a pty) */
#define LL_PIPE_READ  2 /**< ll_transport_open: a pipe's read end (EOF closes it) */
#define LL_PIPE_WRITE 3 /**< ll_transport_open: a pipe's write end (on a FIFO or a socket, its reader going away ends it; not on a tty) */
#define LL_DATAGRAM   4 /**< ll_transport_open: a datagram socket */

/**
 * Connect to host:port (asyncio's create_connection). A name is resolved
 * on the resolver pool, off the loop thread; each address is tried in
 * turn (ll_tcp_connect_ex races them). The connected
 * transport has TCP_NODELAY on; its events go to fn with arg, the first
 * being LL_CONNECTION_MADE, which runs before the future's done callbacks.
 * @param out  a future whose value (ll_future_result) is the ll_transport;
 *             it fails with the last attempt's code (-ECONNREFUSED,
 *             -ENETUNREACH, -ETIMEDOUT ...) or LL_ENONAME. Release it as
 *             any future; the transport lives on. ll_future_cancel on it
 *             before the connect completes (asyncio's cancelled
 *             create_connection) closes the sockets under way: no
 *             transport is made, fn hears nothing, the future is
 *             cancelled. So for ll_tcp_connect_ex, ll_unix_connect and
 *             ll_tls_connect (its handshake too).
 * @return 0, LL_EINVAL (NULL host or out, port outside 0..65535),
 *         LL_EBADHANDLE, LL_ECLOSED.
 */
int ll_tcp_connect(ll_loop loop, const char *host, int port, ll_protocol_fn fn, void *arg, ll_future *out);

/**
 * What ll_tcp_connect_ex connects to and how: asyncio's create_connection
 * arguments. Zero it, set size to sizeof(ll_connect_options) (so a later,
 * larger version of the struct can be told apart), then the fields.
 */
typedef struct ll_connect_options {
    uint32_t size;               /**< sizeof(ll_connect_options) */
    int port;                    /**< the remote port, 0..65535 */
    const char *host;            /**< the remote host: a name or an address */
    const char *local_host;      /**< bind to this address first (local_addr); NULL with local_port 0: no bind */
    int local_port;              /**< the local port (0: any) */
    int interleave;              /**< alternate address families, this many of the first family first (RFC 8305); 0: 1 when happy_eyeballs_delay > 0, else the resolver's order; -1: the resolver's order */
    double happy_eyeballs_delay; /**< seconds: when an attempt has not connected by then, start the next one too; the first to connect wins (RFC 8305; 0.25 is the RFC's advice). 0: one attempt at a time */
    ll_tls_config tls;           /**< 0: plain TCP; else a TLS client handshake with this config, as ll_tls_connect */
    const char *server_name;     /**< with tls: the name to verify (NULL: the config's, else host) */
} ll_connect_options;

/**
 * ll_tcp_connect (or, with opts->tls, ll_tls_connect) with asyncio's other
 * create_connection arguments: a local address, happy eyeballs (RFC 8305:
 * addresses raced after a delay, families interleaved). Names, the local
 * one too, are resolved on the resolver pool. The strings are copied.
 * @param out  as ll_tcp_connect's (as ll_tls_connect's with tls); with no
 *             local address of a remote address's family, that address
 *             fails with LL_EINVAL.
 * @return 0, LL_EINVAL (NULL opts, host or out; size smaller than this
 *         version's, or larger with a non-zero tail; a port outside
 *         0..65535; a negative or non-finite delay), LL_EBADHANDLE (the
 *         loop or the TLS config), LL_ECLOSED.
 */
int ll_tcp_connect_ex(ll_loop loop, const ll_connect_options *opts, ll_protocol_fn fn, void *arg, ll_future *out);

/**
 * Listen on host:port. host NULL or "" listens on every interface, IPv4 and
 * IPv6, on one port; port 0 picks a free one (ll_server_port tells which).
 * An address or "localhost" needs no lookup. A host name is looked up in
 * place only while the loop is not running (the call then blocks its
 * caller, as asyncio's run_until_complete(create_server(...)) does); while
 * the loop runs it is LL_ENEEDASYNC: ll_tcp_listen_ex resolves on the
 * resolver pool. Each address gets a socket. All or nothing, as asyncio's
 * create_server: if
 * any socket cannot bind or listen (the port is taken on one family:
 * -EADDRINUSE) the call fails with that error and leaves no socket open;
 * only a family the system cannot make a socket of is left out. backlog 0
 * means 100. flags: 0 or LL_REUSE_PORT. Each accepted connection is a new
 * transport (TCP_NODELAY on) whose events go to fn with arg; a host keeps
 * per-connection state by calling ll_transport_set_protocol in its
 * LL_CONNECTION_MADE. When accept fails with EMFILE/ENFILE/ENOBUFS/ENOMEM
 * the server reports it to the exception handler, rests one second and
 * goes on (as asyncio); open connections are served meanwhile.
 * A NULL fn sends the connections' events to the loop's batch sink.
 * @return 0, -EADDRINUSE, -EACCES, LL_ENONAME, LL_ENEEDASYNC, LL_EINVAL (NULL out,
 *         bad port, backlog < 0, unknown flags), LL_EBADHANDLE, LL_ECLOSED.
 */
int ll_tcp_listen(ll_loop loop, const char *host, int port, int backlog, int flags,
                  ll_protocol_fn fn, void *arg, ll_server *out);

/**
 * What ll_tcp_listen_ex listens on and how: asyncio's create_server
 * arguments. Zero it, set size to sizeof(ll_listen_options), then the
 * fields.
 */
typedef struct ll_listen_options {
    uint32_t size;     /**< sizeof(ll_listen_options) */
    int port;          /**< 0..65535; 0: a free port */
    const char *host;  /**< a name or an address; NULL or "": every interface, IPv4 and IPv6 */
    int backlog;       /**< 0: 100 */
    int flags;         /**< 0 or LL_REUSE_PORT */
    ll_tls_config tls; /**< 0: plain TCP; else each connection handshakes as a TLS server first (ll_tls_listen) */
} ll_listen_options;

/**
 * ll_tcp_listen (ll_tls_listen with opts->tls) as asyncio's create_server
 * is: a host name is resolved on the resolver pool, never on the loop
 * thread, and the future completes on the loop thread once the sockets
 * listen. The future's value is the server id (the host releases it with
 * ll_release); it fails with ll_tcp_listen's errors (LL_ENONAME,
 * -EADDRINUSE, ...). Cancelling or releasing the future before it is done
 * closes the server it would have carried. The strings are copied.
 * @return 0, LL_EINVAL (NULL opts or out; size smaller than this version's,
 *         or larger with a non-zero tail; a bad port, backlog or flags),
 *         LL_EBADHANDLE (the loop or the TLS config), LL_ECLOSED.
 */
int ll_tcp_listen_ex(ll_loop loop, const ll_listen_options *opts, ll_protocol_fn fn, void *arg, ll_future *out);

/**
 * Serve a socket the host already bound and made listening (asyncio's
 * create_server(sock=...)); the server owns it from now on and closes it.
 * Accepted connections are as for ll_tcp_listen (TCP_NODELAY on TCP).
 * @return 0, -EBADF, -ENOTSOCK, LL_EINVAL (not listening, NULL out),
 *         -EBUSY (watched already), LL_EBADHANDLE, LL_ECLOSED.
 */
int ll_server_open(ll_loop loop, int fd, ll_protocol_fn fn, void *arg, ll_server *out);

/**
 * Connect to the Unix stream socket at path ("@name" is an abstract name on
 * Linux). As ll_tcp_connect otherwise (no TCP_NODELAY).
 * @return 0, LL_EINVAL (NULL path or out, path longer than sun_path),
 *         LL_EBADHANDLE, LL_ECLOSED.
 */
int ll_unix_connect(ll_loop loop, const char *path, ll_protocol_fn fn, void *arg, ll_future *out);

/**
 * Listen on a Unix stream socket at path ("@name": abstract on Linux). A
 * stale socket file at path is removed first, as asyncio does; any other
 * file there is -EADDRINUSE.
 * @return 0, -EADDRINUSE, -ENOENT, LL_EINVAL (path too long, NULL), LL_EBADHANDLE, LL_ECLOSED.
 */
int ll_unix_listen(ll_loop loop, const char *path, int backlog, ll_protocol_fn fn, void *arg, ll_server *out);

/**
 * Adopt an fd the host already has (asyncio's connect_accepted_socket,
 * connect_read_pipe, connect_write_pipe); the transport owns it from now on
 * and closes it. kind: LL_STREAM, LL_PIPE_READ, LL_PIPE_WRITE, LL_DATAGRAM.
 * LL_CONNECTION_MADE comes in a later callback. An LL_PIPE_WRITE transport
 * on a FIFO or a socket watches for its reader going away (the read end
 * closed, or anything read from the socket) and ends with LL_CONNECTION_LOST
 * (code 0, or -EPIPE with bytes still buffered); on a character device (a
 * tty, whose slave reads ready when input arrives) it does not.
 * @return 0, -EBADF (closed fd), -EPERM (a regular file: it cannot be
 *         polled), -EBUSY (the fd is watched by ll_add_reader/writer or
 *         another transport), LL_EINVAL, LL_EBADHANDLE, LL_ECLOSED,
 *         LL_ENOMEM (no id left: fd stays open and the host's).
 */
int ll_transport_open(ll_loop loop, int fd, int kind, ll_protocol_fn fn, void *arg, ll_transport *out);

/**
 * Route the transport's later events to fn with arg (NULL fn: to the
 * loop's batch sink). Takes effect for the very next event, even one of
 * the batch being delivered. @return 0, LL_EBADHANDLE.
 */
int ll_transport_set_protocol(ll_transport t, ll_protocol_fn fn, void *arg);

/**
 * Write len bytes: what the kernel takes now is sent at once, the rest is
 * copied into the transport's buffer and sent as the socket drains. Never
 * blocks. A write error (reset, EPIPE) ends the transport with
 * LL_CONNECTION_LOST and its code; it is not returned here, nor by the
 * writes after it: once the connection is lost other than by the host's
 * own close or abort (the peer reset or went away, an I/O error), writes
 * return 0 and their bytes are dropped (asyncio's write counts them and
 * logs a warning from the fifth on; libloop logs nothing). On a datagram
 * transport, the same as ll_transport_sendto with no address. Called on
 * the loop's thread (from any of its callbacks) for an open stream socket
 * with nothing buffered, it sends without entering the Go runtime (an
 * echo's write is one send()).
 * @return 0, LL_ECLOSED (after the host's close or abort), LL_ESTATE
 *         (after write_eof), LL_EINVAL (NULL data with len > 0; a read
 *         pipe), LL_EBADHANDLE.
 */
int ll_transport_write(ll_transport t, const void *data, size_t len);

/**
 * asyncio's transport.write(), for language bindings: as ll_transport_write,
 * but while close flushes the buffer a write joins it (asyncio's
 * transports take it; sslproto sends its close_notify so, and a paused
 * transport that close drained stays open until its LL_RESUME_WRITING
 * callback returns), and the result says whether the buffer is now above
 * the high-water mark, so a binding can call pause_writing inside write()
 * as asyncio does (LL_PAUSE_WRITING, the event, only comes after the call).
 * Unlike ll_transport_write, a write after the connection was lost (not by
 * the host) is LL_ECLOSED here, so that the binding can drop and count it
 * itself as asyncio does (and report is_closing()).
 * @return 0; 1 when paused for writing; LL_ECLOSED (after abort, after
 *         close once the buffer is flushed, or once the connection was
 *         lost), LL_ESTATE, LL_EINVAL, LL_EBADHANDLE.
 */
int ll_transport_write_async(ll_transport t, const void *data, size_t len);

/**
 * ll_transport_write_async, and *buffered (when not NULL) receives the
 * write buffer's size after the call: 0 means the kernel holds every byte
 * written so far. A binding that gathers one batch's small writes into one
 * send (as uvloop does) learns with the same call whether the buffer is
 * empty, i.e. whether its next small write may wait for the batch's end
 * without changing when pause_writing runs. *buffered is 0 when the result
 * is LL_EINVAL or LL_EBADHANDLE. Called on the loop's thread for an open
 * stream socket with nothing buffered, it sends without entering the Go
 * runtime (as ll_transport_write).
 * @return as ll_transport_write_async.
 */
int ll_transport_write_async_size(ll_transport t, const void *data, size_t len, size_t *buffered);

/**
 * ll_transport_write_async_size with both results in the return value, for
 * bindings where an out-parameter costs more than the call (ctypes): the
 * same write, the same fast path on the loop's thread.
 * @return a negative error code (as ll_transport_write_async; the buffer's
 *         size is then not reported), or (buffered << 1) | status, status
 *         being 1 when paused for writing, 0 otherwise: 0 means sent and
 *         nothing buffered.
 */
int64_t ll_transport_write_async_packed(ll_transport t, const void *data, size_t len);

/**
 * Shut down the write side once the buffer is flushed (shutdown(SHUT_WR);
 * a pipe's write end closes). Reading goes on.
 * @return 0, LL_ECLOSED, LL_EINVAL (datagram or read pipe), LL_EBADHANDLE.
 */
int ll_transport_write_eof(ll_transport t);

/** 1 if ll_transport_write_eof is supported (streams, write pipes), 0 if not, or LL_EBADHANDLE. */
int ll_transport_can_write_eof(ll_transport t);

/**
 * Stop reading (no read event is delivered from the call on; what was read
 * and not delivered is dropped), flush the buffer, then close;
 * LL_CONNECTION_LOST follows with code 0. Calling it again does nothing.
 * @return 0, LL_EBADHANDLE.
 */
int ll_transport_close(ll_transport t);

/** Drop the buffer and close now; LL_CONNECTION_LOST follows with code 0. @return 0, LL_EBADHANDLE. */
int ll_transport_abort(ll_transport t);

/**
 * Stop reading until ll_transport_resume_reading: no LL_DATA_RECEIVED,
 * LL_DATAGRAM_RECEIVED or LL_EOF_RECEIVED is delivered from the call on,
 * even for bytes read in this iteration before it (they wait, see
 * "Read events" above). @return 0, LL_ECLOSED, LL_EBADHANDLE.
 */
int ll_transport_pause_reading(ll_transport t);
/**
 * Resume reading: what was read but withheld while paused is delivered
 * first, in a later callback, then newer data. @return 0, LL_ECLOSED,
 * LL_EBADHANDLE.
 */
int ll_transport_resume_reading(ll_transport t);
/** 1 if the transport is reading, 0 if paused, closing or past EOF, or LL_EBADHANDLE. */
int ll_transport_is_reading(ll_transport t);

/**
 * Set the write buffer's water marks: LL_PAUSE_WRITING is sent once when
 * the buffer grows above high, LL_RESUME_WRITING once when it drains to
 * low. high = low = 0: asyncio's defaults (64 KiB, 16 KiB); otherwise the
 * values as given (low 0: resume only when the buffer is empty; asyncio's
 * own defaulting, low = high / 4, is the binding's to apply).
 * @return 0, LL_EINVAL (low > high, or > 2^62), LL_EBADHANDLE.
 */
int ll_transport_set_write_buffer_limits(ll_transport t, size_t high, size_t low);

/** The bytes waiting in the write buffer, in *out. @return 0, LL_EINVAL (NULL out), LL_EBADHANDLE. */
int ll_transport_get_write_buffer_size(ll_transport t, size_t *out);

/** 1 if close or abort was called or the connection ended, 0 if not, or LL_EBADHANDLE. */
int ll_transport_is_closing(ll_transport t);

/** The transport's fd (>= 0; the library owns it), or LL_EBADHANDLE / LL_ECLOSED. */
int ll_transport_fd(ll_transport t);

/**
 * Copy the transport's local address (a struct sockaddr) to addr, which
 * has room for *len bytes; *len becomes the address's length (copied
 * truncated when larger than the room, as getsockname does).
 * @return 0, -ENOTSOCK (a pipe), LL_EINVAL (NULL len), LL_ECLOSED, LL_EBADHANDLE.
 */
int ll_transport_sockname(ll_transport t, void *addr, uint32_t *len);

/** The connected peer's address, as ll_transport_sockname. @return as it, and -ENOTCONN. */
int ll_transport_peername(ll_transport t, void *addr, uint32_t *len);

/**
 * Send count bytes of the file fd from offset (count 0: to its end) after
 * whatever is buffered, zero-copy with sendfile(2) where the OS allows and
 * read-and-write otherwise (asyncio's loop.sendfile). Bytes written after
 * this call go out after the file. The transport does not take fd (keep it
 * open until the future is done). One at a time.
 * @param out  a future whose value is the number of bytes sent; it fails
 *             with -errno (a send's error, or the transport's own when it
 *             ends with one first: -ECONNRESET ...), or LL_ECLOSED if the
 *             host closes or aborts it first. A failure's payload
 *             (ll_future_exception) is the number of bytes sent before it.
 * @return 0, LL_EINVAL (negative offset or count, NULL out, a read pipe or
 *         datagram transport), LL_ESTATE (another sendfile is running, or
 *         after write_eof), -EBADF, LL_ECLOSED, LL_EBADHANDLE.
 */
int ll_transport_sendfile(ll_transport t, int fd, int64_t offset, int64_t count, ll_future *out);

/* ---- Servers ----------------------------------------------------------- */

/** Stop accepting and close the listening sockets; open connections stay. Idempotent. @return 0, LL_EBADHANDLE. */
int ll_server_close(ll_server s);
/** The port of the server's first socket in *port (0 for Unix sockets). @return 0, LL_EINVAL, LL_ECLOSED, LL_EBADHANDLE. */
int ll_server_port(ll_server s, int *port);
/** How many sockets the server listens on (>= 1), or LL_EBADHANDLE. */
int ll_server_num_sockets(ll_server s);
/** Socket i's address, as ll_transport_sockname. @return 0, LL_EINVAL (i out of range, NULL len), LL_ECLOSED, LL_EBADHANDLE. */
int ll_server_sockname(ll_server s, size_t i, void *addr, uint32_t *len);

/* ---- Terminals (libuv's uv_tty_t) -------------------------------------- */

#define LL_TTY_NORMAL 0 /**< ll_tty_set_mode: the settings the terminal had before libloop changed them */
#define LL_TTY_RAW    1 /**< ll_tty_set_mode: bytes as typed (no line editing, echo, signal keys or CR translation on input) */

/**
 * Adopt a terminal as a stream transport: read what is typed, write what
 * is shown. The transport works on an open of its own (on Linux the
 * terminal reopened by its name, so fd's non-blocking flag stays as it
 * was for others sharing it, such as the shell; elsewhere a duplicate):
 * fd stays the caller's to close. Events as ll_transport_open's LL_STREAM.
 * The window size changes with SIGWINCH: watch it with ll_add_signal_handler
 * and read ll_tty_get_winsize.
 * @return 0, LL_EINVAL (fd is not a terminal; out NULL), -EBADF,
 *         LL_EBADHANDLE, LL_ECLOSED.
 */
int ll_tty_open(ll_loop loop, int fd, ll_protocol_fn fn, void *arg, ll_transport *out);

/**
 * Switch the terminal to LL_TTY_RAW or back to LL_TTY_NORMAL; output
 * written before the call is sent first. A terminal's mode is the
 * process's: libloop keeps the settings each terminal had before its first
 * change, for LL_TTY_NORMAL and ll_tty_reset_mode.
 * @return 0, LL_EINVAL (another mode; not a terminal), LL_ECLOSED,
 *         LL_EBADHANDLE, -errno.
 */
int ll_tty_set_mode(ll_transport t, int mode);

/** The terminal's window size in *cols and *rows. @return 0, LL_EINVAL (NULL pointer; not a terminal), LL_ECLOSED, LL_EBADHANDLE. */
int ll_tty_get_winsize(ll_transport t, int *cols, int *rows);

/**
 * Put every terminal libloop switched to raw mode back in its own mode,
 * also after its transports closed (for an exit path; from any thread, not
 * from a signal handler).
 * @return 0 or the first -errno.
 */
int ll_tty_reset_mode(void);

/* ---- Names --------------------------------------------------------------- */

/*
 * Lookups run on the loop's resolver pool, never on the loop's thread nor
 * on its executor: at most 4 at once per loop (more wait their turn), so a
 * slow DNS server cannot starve ll_run_in_executor work. ll_tcp_connect and
 * ll_tls_connect resolve there too.
 */

/**
 * Resolve host and service with the C library's getaddrinfo on the
 * resolver pool (asyncio's loop.getaddrinfo). family (AF_UNSPEC = 0, AF_INET ...),
 * socktype and flags are getaddrinfo's hints.
 * @param out  a future whose value is a struct addrinfo * list, owned by
 *             the future (freed with freeaddrinfo when it is released); it
 *             fails with LL_ENONAME, -errno, or LL_EINVAL for other
 *             getaddrinfo errors.
 * @return 0, LL_EINVAL (both host and service NULL, NULL out), LL_EBADHANDLE, LL_ECLOSED.
 */
int ll_getaddrinfo(ll_loop loop, const char *host, const char *service, int family, int socktype, int flags,
                   ll_future *out);

/**
 * Find the name of an address with the C library's getnameinfo on the
 * resolver pool (asyncio's loop.getnameinfo, libuv's uv_getnameinfo). addr
 * is a struct sockaddr of addrlen bytes, copied before the call returns;
 * flags are getnameinfo's (NI_NUMERICHOST, NI_NAMEREQD, NI_DGRAM ...).
 * @param out  a future whose value is a const char * "host\0service\0",
 *             valid until the future is released; it fails with
 *             LL_ENONAME (no name, with NI_NAMEREQD), -errno, or LL_EINVAL
 *             for other getnameinfo errors (an unknown family).
 * @return 0, LL_EINVAL (NULL addr, addrlen 0 or larger than a struct
 *         sockaddr_storage, NULL out), LL_EBADHANDLE, LL_ECLOSED.
 */
int ll_getnameinfo(ll_loop loop, const void *addr, uint32_t addrlen, int flags, ll_future *out);

#ifdef __cplusplus
}
#endif

#endif /* LIBLOOP_TRANSPORT_H */
