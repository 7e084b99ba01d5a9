/* SPDX-License-Identifier: MIT */
/*
 * libloop/errno.h — the library's error codes: the LL_E* constants, the one
 * table of them (LL_ERRNO_MAP) and the calls that describe a code (included
 * by libloop.h; do not include it alone). A file of its own, as libuv's
 * uv/errno.h, because more than the compiler reads it: tools/errtab.py
 * generates the Go and Python copies and docs/errors.md from it, and
 * tests/check_abi.py checks every copy against it.
 */
#ifndef LIBLOOP_ERRNO_H
#define LIBLOOP_ERRNO_H

#ifdef __cplusplus
extern "C" {
#endif

/* Library error codes. Each is a #define, not an enum constant as libuv's
 * UV_E* are, because a #define serves every use a C program makes of it:
 * switch cases, #if, and #ifdef to ask whether this header has a code at
 * all (one added in a later version). LL_ERRNO_MAP below lists the same
 * codes with their names and messages; the library does not build if a
 * value here and the map's disagree. */
#define LL_EINVAL       (-10000) /**< bad argument (NULL callback, NaN delay, oversize value) */
#define LL_EBADHANDLE   (-10001) /**< id 0, stale, forged or of the wrong kind */
#define LL_ECLOSED      (-10002) /**< the loop is closed */
#define LL_ERUNNING     (-10003) /**< the loop (or another on this thread) is running / cannot while running */
#define LL_ESTATE       (-10004) /**< invalid state (asyncio's InvalidStateError) */
#define LL_ECANCELLED   (-10005) /**< cancelled */
#define LL_EWRONGTHREAD (-10006) /**< called from a thread other than the one running the loop (see Threads in libloop.h's introduction) */
#define LL_ESTOPPED     (-10007) /**< the loop stopped before the future completed */
#define LL_ETIMEDOUT    (-10008) /**< a timeout passed */
#define LL_ENOMEM       (-10009) /**< out of memory or of id space */
#define LL_ENONAME      (-10010) /**< a host name that does not resolve (getaddrinfo's EAI_NONAME, EAI_AGAIN, EAI_FAIL) */
/* TLS failures (libloop/tls.h): a handshake that fails ends its connection with one of these. */
#define LL_ETLS          (-10011) /**< a TLS failure no other code names */
#define LL_ETLSCERT      (-10012) /**< the peer's certificate did not verify (unknown CA, expired, wrong usage) */
#define LL_ETLSHOST      (-10013) /**< the peer's certificate is not for the expected host name */
#define LL_ETLSNOCERT    (-10014) /**< the peer sent no certificate where one is required */
#define LL_ETLSALERT     (-10015) /**< the peer ended the handshake with a fatal alert (e.g. it rejected our certificate) */
#define LL_ETLSNEGOTIATE (-10016) /**< no TLS version, cipher suite or ALPN protocol in common */
#define LL_ETLSPROTO     (-10017) /**< the peer sent bytes that are not valid TLS */
#define LL_ETLSEOF       (-10018) /**< the connection closed during the handshake or in the middle of a record */
/** This process is a fork() child of the process that loaded libloop (its
 * runtime's threads did not survive the fork); exec, or load libloop after
 * fork. See Forking in libloop.h's introduction for the calls that
 * return it. */
#define LL_EFORKED       (-10019)
/** A synchronous call was given a host name while its loop runs: looking it
 * up would block the loop. Pass an address ("127.0.0.1", "::1",
 * "localhost", NULL / "" for any), or use the call's future-returning form
 * (ll_tcp_listen_ex, ll_udp_open_ex), which resolves on the resolver pool. */
#define LL_ENEEDASYNC    (-10020)

/**
 * Every library error code as XX(name, value, message): name is the code's
 * name without LL_, value the value of LL_<name>, message what ll_strerror()
 * returns for it (and "LL_" #name what ll_err_name() returns). This list is
 * where the codes are defined for the whole project: the library's own
 * tables, the Go and Python bindings and docs/errors.md are generated from
 * it or checked against it (tools/errtab.py, tests/check_abi.py). A program
 * can expand it for its own tables, as libuv's UV_ERRNO_MAP:
 *
 *   #define MY_NAME(name, value, message) case value: return #name;
 *   switch (code) { LL_ERRNO_MAP(MY_NAME) default: return "other"; }
 */
#define LL_ERRNO_MAP(XX)                                                                            \
    XX(EINVAL, -10000, "invalid argument")                                                          \
    XX(EBADHANDLE, -10001, "invalid, stale or wrong-kind handle id")                                \
    XX(ECLOSED, -10002, "event loop is closed")                                                     \
    XX(ERUNNING, -10003, "event loop is running")                                                   \
    XX(ESTATE, -10004, "invalid state")                                                             \
    XX(ECANCELLED, -10005, "cancelled")                                                             \
    XX(EWRONGTHREAD, -10006, "called from a thread that does not run the loop")                     \
    XX(ESTOPPED, -10007, "event loop stopped before future completed")                              \
    XX(ETIMEDOUT, -10008, "timed out")                                                              \
    XX(ENOMEM, -10009, "out of memory")                                                             \
    XX(ENONAME, -10010, "name does not resolve")                                                    \
    XX(ETLS, -10011, "TLS failure")                                                                 \
    XX(ETLSCERT, -10012, "TLS peer certificate verification failed")                                \
    XX(ETLSHOST, -10013, "TLS peer certificate does not match the host name")                       \
    XX(ETLSNOCERT, -10014, "TLS peer sent no certificate")                                          \
    XX(ETLSALERT, -10015, "TLS peer refused the handshake (fatal alert)")                           \
    XX(ETLSNEGOTIATE, -10016, "no TLS version, cipher suite or ALPN protocol in common")            \
    XX(ETLSPROTO, -10017, "TLS protocol error: the peer sent bytes that are not valid TLS")         \
    XX(ETLSEOF, -10018, "connection closed during the TLS handshake or mid-record")                 \
    XX(EFORKED, -10019, "this process is a fork() child of the process that loaded libloop; exec, " \
                        "or load libloop after fork")                                               \
    XX(ENEEDASYNC, -10020, "a host name would block the running loop: pass an address or use the "   \
                           "call's _ex form")

/** @return a description of any code (library, -errno, or unknown). Never NULL; static storage. Thread-safe. */
const char *ll_strerror(int code);
/** @return the code's name, e.g. "LL_EINVAL" or "EBADF"; "UNKNOWN" if none. Never NULL. Thread-safe. */
const char *ll_err_name(int code);

#ifdef __cplusplus
}
#endif

#endif /* LIBLOOP_ERRNO_H */
