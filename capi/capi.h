/* SPDX-License-Identifier: MIT */
/* Internal: capi's own C header, included by its cgo preambles and C files.
 * Not installed. */
#ifndef LIBLOOP_CAPI_H
#define LIBLOOP_CAPI_H

#include "cloop.h"
#include "udprecv.h" /* the C datagram path (capi/udprecv.go) */

/* const-qualified types, so cgo's export prototypes match libloop.h. */
typedef const char ll__cchar;
typedef const uint64_t ll__cid;
typedef const void ll__cvoid;
/* ll_tls_config_set_alpn's list: an array of constant string pointers. */
typedef const char *const ll__cstr;
typedef const ll_process_options ll__cprocess_options;
typedef const ll_spawn_extra ll__cspawn_extra;
typedef const ll_connect_options ll__cconnect_options;
typedef const ll_datagram ll__cdatagram;
typedef const ll_listen_options ll__clisten_options;
typedef const ll_udp_options ll__cudp_options;

#endif
