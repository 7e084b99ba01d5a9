/* SPDX-License-Identifier: MIT */
/*
 * libloop/tls.h — TLS clients and servers on Go's crypto/tls (included by
 * libloop.h; do not include it alone).
 *
 * A TLS transport is a stream transport whose events carry plaintext: the
 * same LL_CONNECTION_MADE, LL_DATA_RECEIVED, LL_EOF_RECEIVED,
 * LL_CONNECTION_LOST, LL_PAUSE_WRITING / LL_RESUME_WRITING (on the
 * encrypted bytes buffered) and the same ll_transport_* calls, with these
 * differences, as asyncio's SSL transports:
 *  - ll_transport_write_eof is refused (LL_EINVAL; can_write_eof is 0),
 *    and so is ll_transport_sendfile;
 *  - the peer's EOF (close_notify, or a close at a record boundary) is
 *    LL_EOF_RECEIVED, after which the transport closes whatever the
 *    protocol answers;
 *  - ll_transport_close sends close_notify, flushes, then closes the fd; a
 *    peer that does not take the bytes within the config's shutdown
 *    timeout ends the transport with LL_ETIMEDOUT;
 *  - a handshake that fails or passes its timeout ends the connection with
 *    a code that says why (LL_ETLS* in libloop/errno.h, or LL_ETIMEDOUT, or
 *    -errno), never the loop; the handshake runs on a goroutine, so a slow
 *    peer never blocks the loop thread; afterwards the loop thread encrypts
 *    and decrypts itself, without a thread switch per record.
 *
 * Threads: the ll_tls_config_* calls are safe from any thread and a config
 * may be shared by loops; a change applies to connections that start
 * after it. The other calls are loop-thread calls, like the transport ones.
 */
#ifndef LIBLOOP_TLS_H
#define LIBLOOP_TLS_H

#ifdef __cplusplus
extern "C" {
#endif

#define LL_TLS_1_2 0x0303 /**< TLS 1.2, as on the wire */
#define LL_TLS_1_3 0x0304 /**< TLS 1.3 */

#define LL_TLS_CLIENT_NONE    0 /**< a server asks clients for no certificate (the default) */
#define LL_TLS_CLIENT_REQUEST 1 /**< it asks; a certificate that is sent must verify */
#define LL_TLS_CLIENT_REQUIRE 2 /**< it requires a certificate that verifies */

/* ---- Configuration ----------------------------------------------------- */

/**
 * A new TLS configuration, released with ll_release (connections made with
 * it are not affected). Defaults: verify the server's certificate against
 * the system CAs, no certificate of our own, TLS 1.2 to 1.3, no ALPN, no
 * client certificates asked, session resumption on (64 client sessions;
 * servers issue tickets), handshake timeout 60 s, shutdown timeout 30 s.
 * @return 0, LL_EINVAL (NULL out), LL_ENOMEM.
 */
int ll_tls_config_new(ll_tls_config *out);

/** Our certificate chain (leaf first) and private key, PEM in memory. @return 0, LL_EINVAL (NULL, empty, unparsable, key not matching), LL_EBADHANDLE. */
int ll_tls_config_set_cert_pem(ll_tls_config c, const void *cert, size_t cert_len, const void *key, size_t key_len);
/** As ll_tls_config_set_cert_pem, from PEM files. @return 0, -ENOENT / -EACCES, LL_EINVAL, LL_EBADHANDLE. */
int ll_tls_config_load_cert_file(ll_tls_config c, const char *cert_path, const char *key_path);

/**
 * Trust the PEM certificates given (added to those added before). Once
 * any is added, the system CAs are no longer trusted (use_system_ca
 * returns to them). The same set checks a server's certificate (client
 * side) and clients' certificates (server side).
 * @return 0, LL_EINVAL (no certificate in it), LL_EBADHANDLE.
 */
int ll_tls_config_add_ca_pem(ll_tls_config c, const void *pem, size_t len);
/** As add_ca_pem, from a file. @return 0, -ENOENT, LL_EINVAL, LL_EBADHANDLE. */
int ll_tls_config_load_ca_file(ll_tls_config c, const char *path);
/** As add_ca_pem, every PEM file of a directory (e.g. an OpenSSL hashed directory). @return 0, -ENOENT, -ENOTDIR, LL_EINVAL (none found), LL_EBADHANDLE. */
int ll_tls_config_load_ca_dir(ll_tls_config c, const char *path);
/** Trust the system's CAs again, dropping those added. @return 0, LL_EBADHANDLE. */
int ll_tls_config_use_system_ca(ll_tls_config c);

/**
 * Client side: 1 (default) fails the handshake unless the server's
 * certificate verifies and names the server; 0 lets it go on (the
 * verdict is still there: ll_tls_verify_result). @return 0, LL_EINVAL (not 0 or 1), LL_EBADHANDLE.
 */
int ll_tls_config_set_verify(ll_tls_config c, int on);
/** The name a client sends (SNI) and checks, when the connect call gives none (NULL: none). @return 0, LL_EBADHANDLE. */
int ll_tls_config_set_server_name(ll_tls_config c, const char *name);
/** Server side: LL_TLS_CLIENT_NONE, _REQUEST or _REQUIRE. @return 0, LL_EINVAL, LL_EBADHANDLE. */
int ll_tls_config_set_client_auth(ll_tls_config c, int mode);
/**
 * ALPN protocols, in order of preference (n 0: none). A server with a list
 * refuses a client that offers only others: the connection ends with
 * LL_ETLSNEGOTIATE and the client is sent no_application_protocol (a
 * libloop client's handshake fails with LL_ETLSNEGOTIATE). That includes
 * an http/1.1-only client of a server listing h2 (crypto/tls alone would
 * serve it without ALPN; Python's ssl serves every such client so). A
 * client that offers no ALPN is served without it.
 * @return 0, LL_EINVAL (NULL entry, empty or longer than 255, n > 64), LL_EBADHANDLE.
 */
int ll_tls_config_set_alpn(ll_tls_config c, const char *const *protos, size_t n);
/** Lowest and highest version: LL_TLS_1_2 or LL_TLS_1_3 (0: 1.2 and 1.3). @return 0, LL_EINVAL, LL_EBADHANDLE. */
int ll_tls_config_set_versions(ll_tls_config c, int min_version, int max_version);
/** Sessions a client keeps for resumption; 0 turns resumption off on both sides. @return 0, LL_EINVAL (> 2^20), LL_EBADHANDLE. */
int ll_tls_config_set_session_cache(ll_tls_config c, size_t entries);
/** Handshake and shutdown timeouts in seconds (0: 60 and 30). @return 0, LL_EINVAL (negative, NaN, over a day), LL_EBADHANDLE. */
int ll_tls_config_set_timeouts(ll_tls_config c, double handshake, double shutdown);

/* ---- Connections -------------------------------------------------------- */

/**
 * Connect to host:port as ll_tcp_connect, then run a TLS client handshake
 * that checks server_name (NULL: the config's, else host). The transport's
 * LL_CONNECTION_MADE comes once the handshake completed, before the
 * future's done callbacks.
 * @param out  a future whose value is the ll_transport; it fails with a
 *             connect error (as ll_tcp_connect), an LL_ETLS* code or
 *             LL_ETIMEDOUT (the handshake's timeout); then no event is
 *             sent and nothing is left open.
 * @return 0, LL_EINVAL (NULL host or out, bad port), LL_EBADHANDLE (loop or config), LL_ECLOSED.
 */
int ll_tls_connect(ll_loop loop, const char *host, int port, ll_tls_config cfg, const char *server_name,
                   ll_protocol_fn fn, void *arg, ll_future *out);

/**
 * Listen as ll_tcp_listen; each accepted connection runs a TLS server
 * handshake with cfg (which needs a certificate) before its
 * LL_CONNECTION_MADE. A connection whose handshake fails gets exactly one
 * event, LL_CONNECTION_LOST with the code (LL_ETLS*, LL_ETIMEDOUT, -errno),
 * and no LL_CONNECTION_MADE; the server goes on.
 * @return as ll_tcp_listen, and LL_EBADHANDLE for the config.
 */
int ll_tls_listen(ll_loop loop, const char *host, int port, int backlog, int flags, ll_tls_config cfg,
                  ll_protocol_fn fn, void *arg, ll_server *out);

/**
 * Serve a listening socket the host bound (as ll_server_open, which this
 * otherwise is: libloop owns fd from now on) with ll_tls_listen's TLS
 * server handshake before each connection's LL_CONNECTION_MADE, and its
 * single LL_CONNECTION_LOST for a connection whose handshake fails.
 * @return as ll_server_open, and LL_EBADHANDLE for the config.
 */
int ll_tls_server_open(ll_loop loop, int fd, ll_tls_config cfg, ll_protocol_fn fn, void *arg, ll_server *out);

/**
 * Upgrade an open stream transport to TLS (asyncio's start_tls; server_side
 * 1: as the server, 0: as a client checking server_name). The transport
 * keeps its id and protocol; from now on its bytes are TLS. Data events
 * stop until the handshake completes; writes made meanwhile are sent after
 * it. Bytes the peer sent before are whatever was already delivered: the
 * protocol above must make the peer wait (as STARTTLS does). Bytes read
 * but withheld while reading was paused (transport.h, "Read events") are
 * the handshake's: it reads them first.
 * @param out  a future whose value is the transport once the handshake
 *             completed; on failure it fails with the code, and the
 *             transport ends with LL_CONNECTION_LOST and that code.
 * @return 0, LL_EINVAL (NULL out, server_side not 0/1, not a stream),
 *         LL_ESTATE (TLS already, after write_eof or EOF, during sendfile),
 *         LL_ECLOSED, LL_EBADHANDLE.
 */
int ll_transport_start_tls(ll_transport t, ll_tls_config cfg, int server_side, const char *server_name, ll_future *out);

/* ---- After the handshake ------------------------------------------------- *
 * These return LL_EINVAL for a plain transport and LL_ESTATE while its
 * handshake runs. Strings are copied as snprintf does: NUL-ended,
 * truncated to len; the return value is the full length.                   */

/** The negotiated version (LL_TLS_1_2, LL_TLS_1_3), or an error. */
int ll_tls_version(ll_transport t);
/** The cipher suite's IANA name (e.g. "TLS_AES_128_GCM_SHA256") into buf. @return its length, or an error. */
int ll_tls_cipher(ll_transport t, char *buf, size_t len);
/** The ALPN protocol agreed (length 0: none) into buf. @return its length, or an error. */
int ll_tls_alpn(ll_transport t, char *buf, size_t len);
/**
 * The peer's certificate number index (0: its own, then its chain) in DER,
 * copied to buf (truncated to len). @return the DER length; 0 when the
 * peer sent no certificate at that index; or an error.
 */
int ll_tls_peer_cert(ll_transport t, size_t index, void *buf, size_t len);
/**
 * Whether the peer's certificate verified against the config's CAs (and
 * named the server, on a client): 0 if it did, else LL_ETLSCERT,
 * LL_ETLSHOST, or LL_ETLSNOCERT when the peer sent none. With verification
 * off (or a server that does not require certificates) the handshake
 * completes whatever this says.
 */
int ll_tls_verify_result(ll_transport t);
/** 1 if the session was resumed (no full handshake), 0 if not, or an error. */
int ll_tls_resumed(ll_transport t);

#ifdef __cplusplus
}
#endif

#endif /* LIBLOOP_TLS_H */
