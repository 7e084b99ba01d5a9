/* SPDX-License-Identifier: MIT */
/* What C knows of the calling thread: the loop it runs (ll_loop_run_* and
 * ll_run mark it), the loop whose batch of callbacks it is running now,
 * and a token that names it to Go. Each is one thread-local load. */
#include "cloop.h"

LL_TLS ll__batch_ctx ll__batch;
LL_TLS uint64_t ll__thread_loop;

void ll__set_thread_loop(uint64_t loop) { ll__thread_loop = loop; }

/* Its address names this thread to Go (capi's loopGate) at no cost: each
 * live thread has its own. */
static LL_TLS char tls_token;

uintptr_t ll__thread_token(void) { return (uintptr_t)&tls_token; }
