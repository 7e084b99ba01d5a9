/* SPDX-License-Identifier: MIT */
/* Internal: the C signal handler's table (signals.c). Not installed. */
#ifndef LIBLOOP_SIGNALS_H
#define LIBLOOP_SIGNALS_H

/* Start writing deliveries of sig to fd (installing the handler for the
 * first watcher); 0 or -errno (-ENOSPC: too many loops watch sig). */
int ll__signal_watch(int sig, int fd);
/* Stop; the host's disposition returns with the last watcher. 1 if fd
 * watched sig, else 0. */
int ll__signal_unwatch(int sig, int fd);

#endif
