/* SPDX-License-Identifier: MIT */
/*
 * libloop/fswatch.h — file-system watchers: libuv's uv_fs_event_t
 * (ll_fs_watch) and uv_fs_poll_t (ll_fs_poll) (included by libloop.h; do
 * not include it alone). docs/fs-events.md has the details and an example.
 */
#ifndef LIBLOOP_FSWATCH_H
#define LIBLOOP_FSWATCH_H

#ifdef __cplusplus
extern "C" {
#endif

/* ---- File-system events ------------------------------------------------- */

/** What happened, in an ll_fs_event_fn's events (libuv's values). */
#define LL_FS_RENAME 1 /**< the path appeared, went away or was renamed */
#define LL_FS_CHANGE 2 /**< the path's contents or attributes changed */

/** ll_fs_watch flag: watch every directory under the path too (libuv's UV_FS_EVENT_RECURSIVE). */
#define LL_FS_RECURSIVE 4

/**
 * A watcher's callback, called on the loop's thread in its iterations.
 * w is the watcher's id (as ll_fs_watch / ll_fs_poll gave it). path is
 * valid only during the call:
 *   - ll_fs_watch: the changed entry's path relative to the watched
 *     directory ("sub/file" for a recursive watcher), or the watched
 *     path's base name for an event on the watched file or directory
 *     itself (on BSD and macOS, kqueue names no entry: always the base
 *     name); "" with an overflow;
 *   - ll_fs_poll: the path as given to ll_fs_poll.
 * events is LL_FS_RENAME, LL_FS_CHANGE or both (events read in one
 * iteration for the same path are merged into one call).
 * status is 0, or:
 *   - -ENOENT (or another -errno): ll_fs_watch: the watched path was
 *     deleted; the watcher has stopped (ll_handle_cancelled says 1) and
 *     only its id is left to release. ll_fs_poll: the stat now fails with
 *     this error (the path went away, or did not exist at the start); the
 *     watcher goes on and reports LL_FS_RENAME with status 0 when the path
 *     is back.
 *   - -ENOSPC, -EACCES (a recursive watcher): a directory created under the
 *     watched one could not be watched (path names it); the rest goes on.
 *   - -ENOBUFS: the kernel dropped events (inotify's queue overflowed):
 *     anything under the watcher may have changed; rescan what you need.
 *     The watcher goes on (a recursive one re-adds the watches it may
 *     have missed).
 * The callback may cancel or release any watcher, its own included: a
 * cancelled watcher is not called again, not even for events already read.
 */
typedef void (*ll_fs_event_fn)(ll_loop loop, ll_handle w, const char *path, int events, int status, void *arg);

/**
 * Watch path (a file or a directory) for changes, as libuv's
 * uv_fs_event_start: on Linux with inotify (one inotify fd per loop, watched
 * by the loop's poll: no thread), on BSD and macOS with kqueue's
 * EVFILT_VNODE (one fd per watcher). With LL_FS_RECURSIVE (Linux only) the
 * whole tree under a directory is watched: libloop adds a watch for each
 * subdirectory present at the start and each one created or moved in later
 * (reporting the entries it finds in it, which may predate its watch), and
 * drops those moved out or deleted; a directory of the tree present at the
 * start that cannot be watched fails the call. A relative path is taken from the
 * current directory at the time of the call.
 * The watcher runs until ll_handle_cancel(*out) or ll_release(*out) (which
 * cancels it too; the id is then stale), until its path is deleted (see
 * ll_fs_event_fn), or until ll_loop_close. Call it on the loop's thread.
 * @return 0, LL_EINVAL (path, fn or out NULL, path "", flags other than
 *         LL_FS_RECURSIVE), -ENOENT, -EACCES, -ENOTDIR (the path's own
 *         errors), -ENOSPC (the system's inotify watch limit is reached),
 *         -ENOTSUP (LL_FS_RECURSIVE where kqueue is used), LL_ECLOSED,
 *         LL_EBADHANDLE, LL_EWRONGTHREAD, LL_ENOMEM.
 */
int ll_fs_watch(ll_loop loop, const char *path, int flags, ll_fs_event_fn fn, void *arg, ll_handle *out);

/**
 * Poll path every interval seconds, as libuv's uv_fs_poll_start: stat it
 * and call fn when the result differs from the last one (size, times,
 * mode, owner, inode, device or link count changed: LL_FS_CHANGE; the path
 * appeared: LL_FS_RENAME, status 0; went away or the stat failed
 * differently: LL_FS_RENAME with the stat's -errno). The first stat,
 * made by this call on the caller's thread, is the baseline (so a change
 * made after this call returns is reported): fn hears of it only if it
 * fails (once, from the loop, not from inside this call). Works on any
 * file system, network ones included, where ll_fs_watch may hear nothing.
 * Each later stat runs on the loop's file pool (as libuv's runs on its
 * thread pool) and its outcome is compared on the loop thread: a slow or
 * hung file system holds a pool worker, never the loop. Stats do not
 * overlap: while one is still running, the intervals that end start none. Stops as
 * ll_fs_watch's watcher does (a vanished path does not stop it); a stat
 * still queued is withdrawn then.
 * @return 0, LL_EINVAL (path, fn or out NULL, path "", interval not
 *         positive, NaN or too large), LL_ECLOSED, LL_EBADHANDLE,
 *         LL_EWRONGTHREAD, LL_ENOMEM.
 */
int ll_fs_poll(ll_loop loop, const char *path, double interval, ll_fs_event_fn fn, void *arg, ll_handle *out);

#ifdef __cplusplus
}
#endif

#endif /* LIBLOOP_FSWATCH_H */
