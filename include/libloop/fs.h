/* SPDX-License-Identifier: MIT */
/*
 * libloop/fs.h — asynchronous file calls (included by libloop.h; do not
 * include it alone).
 */
#ifndef LIBLOOP_FS_H
#define LIBLOOP_FS_H

#include <sys/stat.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ---- File calls --------------------------------------------------------- */

/*
 * libuv's uv_fs_* (asyncio has none): each call runs one system call on the
 * loop's file pool — a bounded pool of its own (LL_FS_DEFAULT_WORKERS
 * threads, ll_loop_set_fs_workers), never the loop thread, the executor or
 * the resolver, so a slow disk cannot starve run_in_executor work or name
 * lookups — and gives a future (ll_future_* calls, ll_task_await):
 *
 *   - its value (ll_future_result) is the system call's result: an fd, a
 *     byte count, or 0;
 *   - a failed system call fails it with -errno (ll_future_result returns
 *     -ENOENT, -EBADF ...; ll_future_exception gives the code and a message);
 *   - its done callbacks run on the loop thread, as every future's do.
 *
 * Buffers: a buffer or struct stat passed in stays the caller's, and the
 * worker reads or writes it until the future is done — do not free, reuse
 * or read it before then. The library does not copy it (a 1 MiB read lands
 * in the caller's memory directly). Paths are copied before the call
 * returns.
 *
 * Cancellation: ll_future_cancel on a call no worker has started yet
 * withdraws it — the system call never runs and the future ends cancelled
 * (libuv's uv_cancel). A started call cannot be cancelled: ll_future_cancel
 * returns 0 and the future completes with the call's outcome (its buffer is
 * in use until then). A task awaiting it that is cancelled is woken when
 * the call completes and then raises its cancellation.
 *
 * Closing the loop withdraws the queued calls and waits for started ones to
 * finish, so once ll_loop_close returns no worker uses a caller's buffer.
 *
 * Each call returns 0 with *out set, or: LL_EINVAL (a NULL path, buffer,
 * struct stat or out; a length over LL_FS_MAX_IO; an offset below -1; a
 * negative fd where the call takes one to close), LL_EBADHANDLE (a bad
 * loop id), LL_ECLOSED (closed loop), LL_EWRONGTHREAD (debug mode: another
 * thread runs the loop), LL_ENOMEM. A bad fd is not refused at once: it is
 * the system call's -EBADF, through the future.
 */

/** The file pool's default size: libuv's thread pool default. */
#define LL_FS_DEFAULT_WORKERS 4
/** The longest read or write accepted (Linux's limit for one call); longer is LL_EINVAL. */
#define LL_FS_MAX_IO 0x7ffff000

/** ll_fs_copyfile flags (libuv's UV_FS_COPYFILE_*). */
#define LL_FS_COPYFILE_EXCL 1          /**< fail with -EEXIST if the destination exists */
#define LL_FS_COPYFILE_FICLONE 2       /**< try a copy-on-write clone first, else copy */
#define LL_FS_COPYFILE_FICLONE_FORCE 4 /**< a copy-on-write clone, or fail with the clone's error */

/**
 * Set how many file calls may run at once (1..1024; default
 * LL_FS_DEFAULT_WORKERS), all forms together: ll_fs_read_cb's and
 * ll_fs_write_cb's and the future-returning calls share one pool and one
 * FIFO, so the loop never runs more than n file calls' threads.
 * @return 0, LL_EINVAL (n out of range), LL_EBADHANDLE, LL_ECLOSED,
 *         LL_EWRONGTHREAD.
 */
int ll_loop_set_fs_workers(ll_loop loop, int n);

/**
 * open(2) path with flags and mode (O_CLOEXEC is always added, as libuv
 * does). @param out  a future whose value is the fd.
 * @return 0, LL_EINVAL, LL_EBADHANDLE, LL_ECLOSED, LL_EWRONGTHREAD, LL_ENOMEM.
 */
int ll_fs_open(ll_loop loop, const char *path, int flags, int mode, ll_future *out);

/** close(2) fd. Value 0. @return 0, LL_EINVAL (fd negative, NULL out), LL_EBADHANDLE, LL_ECLOSED, LL_EWRONGTHREAD. */
int ll_fs_close(ll_loop loop, int fd, ll_future *out);

/**
 * Read up to len bytes of fd into buf, at offset (pread(2)), or at the file
 * position when offset is -1 (read(2); the position advances). buf is the
 * worker's until the future is done.
 * @param out  a future whose value is the byte count (0 at the end of file).
 * @return 0, LL_EINVAL (buf or out NULL, len > LL_FS_MAX_IO, offset < -1),
 *         LL_EBADHANDLE, LL_ECLOSED, LL_EWRONGTHREAD.
 */
int ll_fs_read(ll_loop loop, int fd, void *buf, size_t len, int64_t offset, ll_future *out);

/** As ll_fs_read, writing len bytes of buf (pwrite(2), or write(2) at offset -1). Value: the byte count. */
int ll_fs_write(ll_loop loop, int fd, const void *buf, size_t len, int64_t offset, ll_future *out);

/**
 * A file call's completion callback (ll_fs_read_cb, ll_fs_write_cb), run on
 * the loop thread: result is the byte count, or a negative error code
 * (-errno: -EBADF, -EIO ...). The same type as ll_io_callback.
 */
typedef void (*ll_fs_callback)(ll_loop loop, int result, void *arg);

/**
 * ll_fs_read with a completion callback instead of a future (libuv's
 * uv_fs_read with its uv_fs_cb): cb(loop, result, arg) runs on the loop
 * thread once the read is done, result the byte count (0 at the end of
 * file) or -errno. No future is made, so nothing is released afterwards:
 * one call into the library per read where a future costs four
 * (ll_fs_read, ll_future_add_done_callback, ll_future_result, ll_release).
 * buf is the worker's until cb runs. The read cannot be cancelled; a read
 * still queued when the loop closes is withdrawn and cb never runs, and
 * ll_loop_close waits for a started one (buf is free once it returns).
 * A pending read keeps ll_loop_run(LL_RUN_DEFAULT) going. A bad fd is the
 * callback's -EBADF.
 * @return 0 (cb will run), LL_EINVAL (buf or cb NULL, len > LL_FS_MAX_IO,
 *         offset < -1), LL_EBADHANDLE, LL_ECLOSED, LL_EWRONGTHREAD; cb
 *         does not run when the call fails.
 */
int ll_fs_read_cb(ll_loop loop, int fd, void *buf, size_t len, int64_t offset, ll_fs_callback cb, void *arg);

/**
 * ll_fs_read_cb for a write (pwrite(2), or write(2) at offset -1): result
 * is the byte count written or -errno. buf is the worker's until cb runs.
 * @return as ll_fs_read_cb.
 */
int ll_fs_write_cb(ll_loop loop, int fd, const void *buf, size_t len, int64_t offset, ll_fs_callback cb, void *arg);

/**
 * stat(2) path into *st, which is the worker's until the future is done.
 * Value 0. @return 0, LL_EINVAL (path, st or out NULL), LL_EBADHANDLE,
 * LL_ECLOSED, LL_EWRONGTHREAD.
 */
int ll_fs_stat(ll_loop loop, const char *path, struct stat *st, ll_future *out);

/** As ll_fs_stat, without following a final symbolic link (lstat(2)). */
int ll_fs_lstat(ll_loop loop, const char *path, struct stat *st, ll_future *out);

/** As ll_fs_stat, of an open fd (fstat(2)). */
int ll_fs_fstat(ll_loop loop, int fd, struct stat *st, ll_future *out);

/** rename(2) from to to. Value 0. @return 0, LL_EINVAL (a NULL path or out), LL_EBADHANDLE, LL_ECLOSED, LL_EWRONGTHREAD. */
int ll_fs_rename(ll_loop loop, const char *from, const char *to, ll_future *out);

/** unlink(2) path. Value 0. @return as ll_fs_rename. */
int ll_fs_unlink(ll_loop loop, const char *path, ll_future *out);

/** mkdir(2) path with mode (less the umask). Value 0. @return as ll_fs_rename. */
int ll_fs_mkdir(ll_loop loop, const char *path, int mode, ll_future *out);

/** rmdir(2) path. Value 0. @return as ll_fs_rename. */
int ll_fs_rmdir(ll_loop loop, const char *path, ll_future *out);

/**
 * List the directory path (sorted bytewise, without "." and "..", as
 * libuv's scandir).
 * @param out  a future whose value is a const char * to the names, each
 *             ending in NUL, the list ending in an empty name ("a\0b\0\0";
 *             an empty directory gives "\0"); valid until the future is
 *             released.
 * @return as ll_fs_rename.
 */
int ll_fs_scandir(ll_loop loop, const char *path, ll_future *out);

/** fsync(2) fd. Value 0. @return 0, LL_EINVAL (NULL out), LL_EBADHANDLE, LL_ECLOSED, LL_EWRONGTHREAD. */
int ll_fs_fsync(ll_loop loop, int fd, ll_future *out);

/** ftruncate(2) fd to len bytes. Value 0. @return 0, LL_EINVAL (len negative, NULL out), LL_EBADHANDLE, LL_ECLOSED, LL_EWRONGTHREAD. */
int ll_fs_ftruncate(ll_loop loop, int fd, int64_t len, ll_future *out);

/**
 * Copy the file from to to, which gets from's permission bits (libuv's
 * uv_fs_copyfile): in the kernel where it can (copy_file_range on Linux),
 * else through a buffer. An existing destination is replaced unless
 * LL_FS_COPYFILE_EXCL; a copy that fails once the destination is open
 * removes it. Copying a file onto itself does nothing. Value 0.
 * @return 0, LL_EINVAL (a NULL path or out, unknown flags), LL_EBADHANDLE,
 *         LL_ECLOSED, LL_EWRONGTHREAD.
 */
int ll_fs_copyfile(ll_loop loop, const char *from, const char *to, int flags, ll_future *out);

/**
 * Copy up to len bytes from in_fd at offset (-1: at its file position,
 * which advances) to out_fd at its position: one sendfile(2) where the OS
 * allows it between these fds (Linux: any file), else read and written
 * through a buffer. The value is the byte count, which may be less than
 * len (as libuv's uv_fs_sendfile).
 * @return 0, LL_EINVAL (NULL out, len > LL_FS_MAX_IO, offset < -1),
 *         LL_EBADHANDLE, LL_ECLOSED, LL_EWRONGTHREAD.
 */
int ll_fs_sendfile(ll_loop loop, int out_fd, int in_fd, int64_t offset, size_t len, ll_future *out);

#ifdef __cplusplus
}
#endif

#endif /* LIBLOOP_FS_H */
