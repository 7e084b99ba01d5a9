/* SPDX-License-Identifier: MIT */
/*
 * libloop.h — the public C interface of libloop, an asyncio-style event loop.
 *
 * Introduction
 * ------------
 * A loop owns a queue of ready callbacks, a heap of timers and a selector
 * (epoll on Linux, kqueue on macOS/BSD). Each iteration ("run once") polls for
 * I/O, moves due timers to the ready queue and runs exactly the callbacks that
 * were ready when the iteration began, in FIFO order; callbacks added while it
 * runs wait for the next iteration. This is CPython asyncio's
 * BaseEventLoop._run_once, so code written against asyncio's ordering rules
 * behaves the same here.
 *
 * Objects are opaque 64-bit ids. Id 0 is never valid; a stale, forged or
 * wrong-kind id makes a function return LL_EBADHANDLE, never crash. A
 * released id stays stale: it could name a new object only after about 2^40
 * releases of ids sharing its table slot, decades of nonstop create/release.
 *
 * Errors: every function that can fail returns int, >= 0 on success and < 0
 * on failure. System failures are -errno (-EBADF, -EPERM, ...). Library errors
 * are the LL_E* constants of libloop/errno.h (all <= -10000). ll_strerror()
 * and ll_err_name() describe any code and never return NULL. A call that
 * returns an error has had no effect: in particular a constructor refused
 * with LL_ENOMEM (out of ids: about 16M live objects) has run no step,
 * started no job, armed no timer, started no child and left an fd the host
 * passed in open and the host's.
 *
 * Threads: one thread runs a loop at a time. While it runs, only functions
 * marked "Thread-safe" may be called from other threads: ll_call_soon_threadsafe,
 * ll_loop_wakeup, ll_loop_is_running, ll_loop_is_closed, ll_loop_time, and
 * the version and error-string calls. While it is not running, any thread
 * may call anything, one thread at a time.
 * A call from another thread while the loop runs is refused, and changes
 * nothing, with LL_EWRONGTHREAD:
 *  - in every mode, on every OS, for the calls a host is likely to make from
 *    a worker thread by mistake: ll_call_soon, ll_call_later, ll_call_at,
 *    ll_handle_cancel, ll_add_reader, ll_add_writer, ll_remove_reader,
 *    ll_remove_writer, ll_future_set_result, ll_future_set_exception,
 *    ll_future_cancel, ll_loop_stop, ll_loop_stats, ll_loop_close and ll_release (on a
 *    loop, handle, future or task id). The check reads a thread-local marker set by
 *    ll_loop_run_* and ll_run, and costs about a nanosecond;
 *  - in debug mode (ll_loop_set_debug), on Linux, for every other function
 *    taking a loop, handle, future or task id, even where its @return list
 *    does not repeat it. Outside debug mode such a call is undefined.
 * To act on a running loop from another thread, post a callback with
 * ll_call_soon_threadsafe and make the call there.
 *
 * Ownership: the void *arg given with a callback belongs to the host; the
 * library never dereferences it. Strings passed in are copied. Objects the
 * host creates (ll_loop_new, handles returned through an out pointer, ...)
 * hold one host reference, released with ll_release(); the loop keeps its own
 * references while it still needs an object.
 *
 * Forking: a process that has loaded libloop carries a Go runtime and must
 * not use libloop in a fork() child unless it execs (ll_spawn is safe). The
 * runtime's threads do not survive fork(), so in the child a call into the
 * library could wait forever for one of them. Such a child gets LL_EFORKED
 * at once, and nothing done, from the calls it is likely to make first:
 * ll_loop_new, ll_run, ll_loop_run_forever, ll_loop_run_once,
 * ll_loop_run_until_complete, ll_loop_close, ll_release, and ll_call_soon
 * unless it queues without entering the runtime (no handle wanted, the
 * loop idle or run by the calling thread's callback: accepted, and never
 * run, since the run calls are refused). ll_strerror and ll_err_name
 * describe LL_EFORKED there. Other calls are undefined in such a child.
 * A child made by fork() is always seen; one made without pthread_atfork
 * handlers (glibc's _Fork, a raw clone) only by ll_loop_new and ll_run,
 * which also compare process ids. Load libloop after forking (dlopen in
 * the child), or exec.
 */
#ifndef LIBLOOP_H
#define LIBLOOP_H

#include <stddef.h>
#include <stdint.h>

/* The error codes (LL_E*, LL_ERRNO_MAP), ll_strerror and ll_err_name. */
#include "libloop/errno.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- Version ----------------------------------------------------------- */

#define LL_VERSION_MAJOR 0
#define LL_VERSION_MINOR 1
#define LL_VERSION_PATCH 0
/** The header's version as MAJOR*10000 + MINOR*100 + PATCH. */
#define LL_VERSION (LL_VERSION_MAJOR * 10000 + LL_VERSION_MINOR * 100 + LL_VERSION_PATCH)

/** @return the library's version as MAJOR*10000 + MINOR*100 + PATCH. Thread-safe. */
int ll_version(void);
/** @return the library's version as "MAJOR.MINOR.PATCH" (static storage). Thread-safe. */
const char *ll_version_string(void);

/* ---- Ids --------------------------------------------------------------- */

/** Opaque object ids. 0 is never a valid id. */
typedef uint64_t ll_loop;
typedef uint64_t ll_handle;
typedef uint64_t ll_future;
typedef uint64_t ll_task;
typedef uint64_t ll_process;
typedef uint64_t ll_transport;
typedef uint64_t ll_server;
typedef uint64_t ll_tls_config;

/**
 * Thread-safe. Drop the host's reference to an object. A handle id becomes
 * invalid (its callback still runs unless cancelled). A future or task id
 * stays valid while the loop still needs the object, but is never released
 * twice. A loop is closed first and its id becomes invalid.
 *
 * Any thread may call it, and racing calls are safe: of several threads
 * releasing one id, exactly one gets 0 and the others LL_EBADHANDLE; the
 * reference is dropped once. What the release does (free a future's value,
 * report its unretrieved exception, close a loop) runs on the calling
 * thread, so it may not overlap the loop running elsewhere: while another
 * thread runs the object's loop, nothing is released and the call returns
 * LL_EWRONGTHREAD (release it from a callback of that loop, e.g. posted
 * with ll_call_soon_threadsafe, or after the run returns). A release of an
 * idle loop's object waits for another thread's release of that loop's
 * objects to finish, and a run started meanwhile waits for it too.
 * @return 0, or LL_EBADHANDLE for an unknown, stale or already released id,
 *         LL_ERUNNING for a loop released by its own callback while it runs,
 *         LL_EWRONGTHREAD while another thread runs the loop concerned,
 *         LL_EFORKED in a fork() child (nothing is released).
 */
int ll_release(uint64_t id);

/* ---- Callback types ---------------------------------------------------- */

/** A callback run by the loop on its thread. */
typedef void (*ll_callback)(ll_loop loop, void *arg);
/** An fd watcher's callback: fd is ready for the direction it was added for. */
typedef void (*ll_io_callback)(ll_loop loop, int fd, void *arg);

/** What the loop reports to its exception handler (asyncio's context dict). */
typedef struct ll_error_context {
    const char *message; /**< what happened; valid only during the handler call */
    int code;            /**< the error code concerned, or 0 */
    ll_future future;    /**< the future concerned, or 0 */
    ll_task task;        /**< the task concerned, or 0 */
    ll_handle handle;    /**< the handle concerned, or 0 */
} ll_error_context;

/** An exception handler; ctx is valid only during the call. */
typedef void (*ll_exception_handler)(ll_loop loop, const ll_error_context *ctx, void *arg);

/* ---- Loop -------------------------------------------------------------- */

/** ll_loop_run_once and ll_loop_run modes. The values are not libuv's
 * (UV_RUN_DEFAULT 0, UV_RUN_ONCE 1, UV_RUN_NOWAIT 2): LL_RUN_ONCE and
 * LL_RUN_NOWAIT were fixed by ll_loop_run_once first, so LL_RUN_DEFAULT
 * takes the next value. Use the names. */
#define LL_RUN_ONCE   0 /**< block in poll until something is due, then run one iteration */
#define LL_RUN_NOWAIT 1 /**< run one iteration without blocking */
#define LL_RUN_DEFAULT 2 /**< ll_loop_run only: until nothing referenced is left */

/**
 * Create a loop. *out receives its id; release it with ll_release (or close
 * it with ll_loop_close and then release it).
 * @return 0, LL_EINVAL (out NULL), -errno if the selector cannot be made,
 *         LL_EFORKED in a fork() child (see Forking).
 */
int ll_loop_new(ll_loop *out);

/**
 * Close the loop: drop every pending callback, timer and fd watcher and free
 * the selector. Idempotent, also when two threads close an idle loop at once.
 * The id stays valid (ll_loop_is_closed) until released.
 * Work in flight: executor work (ll_run_in_executor, ll_queue_work) already
 * running or queued still runs to completion on its worker thread after
 * close (and release) return, and may read its arg until it returns; its
 * outcome, its after callback and its future's done callbacks are dropped.
 * So free what work reads only once the work itself has said it is done
 * (not from a done callback or after, which never run). Posts from other
 * threads racing the close either run before it or return LL_ECLOSED (or
 * LL_EBADHANDLE once the id is released); none runs after it. The futures
 * the close lets go may report an exception nobody retrieved to the
 * exception handler during the call (also from ll_release of the loop):
 * there, as after it, ll_call_soon, ll_call_later, ll_call_at,
 * ll_call_soon_threadsafe and ll_future_new return LL_ECLOSED.
 * @return 0, LL_ERUNNING while it runs on this thread, LL_EWRONGTHREAD while
 *         another thread runs it, LL_EBADHANDLE, LL_EFORKED.
 */
int ll_loop_close(ll_loop loop);

/**
 * Run iterations on the calling thread until ll_loop_stop().
 * @return 0 once stopped; LL_ERUNNING if this loop (on any thread) or any
 *         loop on this thread is already running; LL_ECLOSED; LL_EBADHANDLE;
 *         -errno if the poll fails; LL_EFORKED in a fork() child.
 */
int ll_loop_run_forever(ll_loop loop);

/**
 * Run one iteration. mode is LL_RUN_ONCE (block until I/O, a timer or a
 * thread-safe call is due) or LL_RUN_NOWAIT (never block).
 * @return 0, LL_EINVAL for an unknown mode, and as ll_loop_run_forever.
 */
int ll_loop_run_once(ll_loop loop, int mode);

/**
 * Run the loop as libuv's uv_run. LL_RUN_DEFAULT runs iterations until
 * nothing keeps the loop alive, or until ll_loop_stop; LL_RUN_ONCE and
 * LL_RUN_NOWAIT run one iteration (blocking, not blocking). What keeps a
 * loop alive: a ready callback (ll_call_soon, a due timer, a post from
 * another thread not yet run, a future's done callback scheduled); a
 * referenced timer (ll_call_later/ll_call_at, with or without a handle,
 * ll_timer_start), hook, transport (until its LL_CONNECTION_LOST), server
 * (until closed), process (until it exited), signal handler or file-system
 * watcher (see ll_ref; all are referenced when made); a connection being
 * made; a reader or writer (ll_add_reader/ll_add_writer); executor work,
 * name lookups and file calls (ll_fs_*) queued, running or whose outcome is not delivered yet (libuv's pending
 * requests). A pending future keeps it alive only through what settles it:
 * one the host settles from a thread of its own does not (keep a
 * referenced object meanwhile). As uv_run, a loop that is not alive runs
 * no iteration, in any mode (ll_loop_run_forever and ll_loop_run_once run
 * regardless, as before). ll_loop_stop before the call lets one iteration
 * run, as for ll_loop_run_forever.
 * @return 1 if the loop is still alive when it returns (LL_RUN_DEFAULT:
 *         only when ll_loop_stop ended it with referenced work left), 0 if
 *         not; LL_EINVAL for an unknown mode, and as ll_loop_run_forever.
 */
int ll_loop_run(ll_loop loop, int mode);

/**
 * Make ll_loop_run_forever return once the current iteration has finished.
 * Called while the loop is not running, the next run_forever runs exactly
 * one iteration (as asyncio's stop()). From another thread, post it with
 * ll_call_soon_threadsafe.
 * @return 0, LL_ECLOSED, LL_EBADHANDLE, LL_EWRONGTHREAD.
 */
int ll_loop_stop(ll_loop loop);

/** Thread-safe. @return 1 if running, 0 if not, LL_EBADHANDLE. */
int ll_loop_is_running(ll_loop loop);
/** Thread-safe. @return 1 if closed, 0 if not, LL_EBADHANDLE. */
int ll_loop_is_closed(ll_loop loop);

/** Thread-safe. @return the loop's monotonic clock in seconds; negative for a bad id. */
double ll_loop_time(ll_loop loop);

/**
 * Debug mode: callbacks slower than the slow-callback duration are reported
 * to the exception handler, and every non-thread-safe call from a thread
 * other than the one running the loop returns LL_EWRONGTHREAD (on Linux;
 * without debug mode only the calls listed under Threads are checked).
 * @return 0, LL_EBADHANDLE.
 */
int ll_loop_set_debug(ll_loop loop, int enabled);
/** @return 1 if debug mode is on, 0 if off, LL_EBADHANDLE. */
int ll_loop_get_debug(ll_loop loop);

/**
 * The loop's backend fd, as libuv's uv_backend_fd: its epoll fd (Linux) or
 * kqueue fd (darwin, BSD). poll(2) reports it readable (POLLIN), consuming
 * nothing, while any fd the loop watches is ready or a wakeup is pending:
 * a host that embeds the loop in another loop, or runs iterations of its
 * own between the loop's (the Python binding does), polls it to learn that
 * the loop has I/O to run. The fd remains the loop's: do not close it,
 * read it or add fds to it. Valid until ll_loop_close.
 * @return the fd (>= 0), LL_ECLOSED, LL_EBADHANDLE, LL_EWRONGTHREAD.
 */
int ll_loop_backend_fd(ll_loop loop);

/**
 * How long the loop's next iteration would let its poll block, as libuv's
 * uv_backend_timeout: with ll_loop_backend_fd, what a host that embeds the
 * loop in a poll of its own needs. Wait on the backend fd for at most this
 * many milliseconds, then run one iteration with
 * ll_loop_run_once(loop, LL_RUN_NOWAIT). Rounded up, so a host that waits
 * this long never wakes before the first timer is due. Cancelled timers at
 * the front are dropped first, and, as before a blocking poll, a
 * ll_call_soon_threadsafe made from now on makes the backend fd readable.
 * Call it on the loop's thread while the loop is not running (or from one
 * of its callbacks).
 * @return 0 if a callback is ready (scheduled, posted from another thread,
 *         or a due timer), an idle hook is active or the loop is stopping;
 *         else the milliseconds until the first timer (at most INT_MAX);
 *         -1 if nothing is scheduled (only I/O or another thread can wake
 *         it); LL_ECLOSED, LL_EBADHANDLE, LL_EWRONGTHREAD.
 */
int ll_loop_next_timeout(ll_loop loop);

/** ll_hook_add kinds (libuv's prepare, check and idle handles). */
#define LL_HOOK_PREPARE 1 /**< runs in every iteration, just before the poll */
#define LL_HOOK_CHECK   2 /**< runs in every iteration, just after the poll, before the callbacks it made ready */
#define LL_HOOK_IDLE    3 /**< runs in every iteration, first; while one is active the poll does not block */

/** A hook's callback: the loop and the arg given to ll_hook_add. */
typedef void (*ll_hook_fn)(ll_loop loop, void *arg);

/**
 * Add a hook that calls fn(loop, arg) in every iteration of the loop (of
 * ll_loop_run_forever, ll_loop_run_once and ll_loop_run_until_complete),
 * at the moment its kind names: LL_HOOK_IDLE first, then LL_HOOK_PREPARE,
 * the poll, LL_HOOK_CHECK, then the ready callbacks and due timers. Hooks
 * of one kind run in the order they were added; one added from a hook runs
 * from the next iteration on, one cancelled runs no more, even later in the
 * same iteration. The hook is active until ll_handle_cancel(*out) or
 * ll_release(*out) (which cancels it too; the id is then stale);
 * ll_handle_cancelled tells whether it is still active. ll_loop_close
 * cancels every hook (their ids stay until released).
 * Cost: a loop with no active hook pays two loads and branches an iteration;
 * with one, a crossing per hook per iteration (~115 ns).
 * @return 0, LL_EINVAL (unknown kind, fn or out NULL), LL_ECLOSED,
 *         LL_EBADHANDLE, LL_EWRONGTHREAD, LL_ENOMEM.
 */
int ll_hook_add(ll_loop loop, int kind, ll_hook_fn fn, void *arg, ll_handle *out);

/**
 * Set the debug-mode threshold (seconds, default 0.1).
 * @return 0, LL_EINVAL (negative or NaN), LL_EBADHANDLE.
 */
int ll_loop_set_slow_callback_duration(ll_loop loop, double seconds);

/**
 * Install the exception handler (NULL restores the default, which writes one
 * line to stderr). It runs on the loop thread.
 * @return 0, LL_EBADHANDLE.
 */
int ll_loop_set_exception_handler(ll_loop loop, ll_exception_handler handler, void *arg);

/* ---- Callbacks and timers ---------------------------------------------- */

/**
 * Schedule cb(loop, arg) for the next iteration, after everything already
 * ready (FIFO). If out is not NULL it receives a handle id (release it with
 * ll_release); with out NULL no handle is made, which is the fastest path.
 * @return 0, LL_EINVAL (cb NULL), LL_ECLOSED, LL_EBADHANDLE, LL_EWRONGTHREAD,
 *         LL_EFORKED (see Forking).
 */
int ll_call_soon(ll_loop loop, ll_callback cb, void *arg, ll_handle *out);

/**
 * Schedule cb after delay seconds. A timer never runs before its deadline;
 * equal deadlines run in scheduling order; a negative delay (even -INFINITY)
 * is due at once. If out is not NULL it receives a handle id (release it
 * with ll_release): a 40-byte record in C memory, made and cancelled without
 * entering Go, freed once the timer ran (or was cancelled and dropped) and
 * the handle was released; the handle stays valid after the loop is closed
 * and released (it still answers and releases once).
 * @return 0, LL_EINVAL (cb NULL, NaN, +INFINITY or over ~100 years), LL_ECLOSED,
 *         LL_EBADHANDLE, LL_EWRONGTHREAD.
 */
int ll_call_later(ll_loop loop, double delay, ll_callback cb, void *arg, ll_handle *out);

/** Schedule cb at loop time `when` (seconds, see ll_loop_time); as ll_call_later. */
int ll_call_at(ll_loop loop, double when, ll_callback cb, void *arg, ll_handle *out);

/**
 * Thread-safe. Schedule cb from any thread and wake the loop if it is
 * blocked in poll. Every posted callback runs exactly once, in post order.
 * @return 0, LL_EINVAL (cb NULL), LL_ECLOSED, LL_EBADHANDLE.
 */
int ll_call_soon_threadsafe(ll_loop loop, ll_callback cb, void *arg);

/**
 * Thread-safe. Wake the loop from a blocking poll without scheduling anything.
 * @return 0, LL_EBADHANDLE, LL_ECLOSED.
 */
int ll_loop_wakeup(ll_loop loop);

/**
 * Cancel a handle: its callback will not run. Cancelling twice or after it
 * ran does nothing. A hook's id (ll_hook_add) and a repeating timer's
 * (ll_timer_start) are handles: cancelled, they run no more.
 * @return 0, LL_EBADHANDLE, LL_EWRONGTHREAD.
 */
int ll_handle_cancel(ll_handle handle);

/** @return 1 if cancelled, 0 if not, LL_EBADHANDLE. */
int ll_handle_cancelled(ll_handle handle);

/** @return a timer handle's deadline in loop seconds; negative for a bad id or a non-timer handle. */
double ll_timer_when(ll_handle handle);

/**
 * Start a timer that may repeat (libuv's uv_timer_start): cb(loop, arg)
 * runs once first seconds have passed (a negative delay is due at once),
 * then every repeat seconds (0: once) until the timer is stopped with
 * ll_handle_cancel(*out) or ll_release(*out) (which stops it too; the id
 * is then stale). Each expiry re-arms the timer before cb runs, repeat
 * seconds after the moment it ran: a late iteration delays the rest, it
 * never runs the timer twice to catch up; cb may stop it, or change it
 * with ll_timer_set_repeat and ll_timer_again. ll_timer_when gives the
 * next expiry (negative while stopped), ll_handle_cancelled 1 while it is
 * stopped (also once a one-shot has run). ll_loop_close stops it (the id
 * stays until released). Equal deadlines run in scheduling order with
 * every other timer. Each expiry enters the runtime (~115 ns more than an
 * ll_call_later timer): for one-shots on a hot path, prefer ll_call_later.
 * @return 0, LL_EINVAL (cb or out NULL, first NaN or too far ahead, repeat
 *         negative, NaN or over about 100 years), LL_ECLOSED, LL_EBADHANDLE,
 *         LL_EWRONGTHREAD, LL_ENOMEM.
 */
int ll_timer_start(ll_loop loop, double first, double repeat, ll_callback cb, void *arg, ll_handle *out);

/**
 * Restart a repeating timer with its repeat interval as the delay (libuv's
 * uv_timer_again): running or stopped, it next expires repeat seconds from
 * now. A timer whose repeat is 0 is left as it is.
 * @return 0, LL_ECLOSED, LL_EBADHANDLE (also for an id that is not from
 *         ll_timer_start), LL_EWRONGTHREAD.
 */
int ll_timer_again(ll_handle timer);

/**
 * Set a timer's repeat interval in seconds (0: no repeat); it applies from
 * the next expiry or ll_timer_again on.
 * @return 0, LL_EINVAL (negative, NaN or over about 100 years),
 *         LL_EBADHANDLE (also for an id that is not from ll_timer_start),
 *         LL_EWRONGTHREAD.
 */
int ll_timer_set_repeat(ll_handle timer, double repeat);

/* ---- References and walking (libuv's uv_ref, uv_walk) -------------------- */

/**
 * References. Every timer handle (ll_call_later/ll_call_at's, ll_timer_start's),
 * hook, transport, server, process, signal handler (its id from
 * ll_add_signal_handler_ex or ll_loop_walk) and file-system watcher
 * (ll_fs_watch, ll_fs_poll) is referenced when made: while
 * active it keeps ll_loop_run(LL_RUN_DEFAULT) going. ll_unref makes it
 * stop doing so; it still works (its callbacks run, its events arrive).
 * ll_ref undoes that. Both are idempotent; as libuv's, the choice stays
 * across ll_timer_again and a repeating timer's expiries. A process's pipes
 * are transports with references of their own; a server's connections too.
 * A call_soon handle is a ready callback, always counted: ll_unref does
 * nothing to it, nor to a timer handle that already ran or was cancelled.
 * Called on the thread that runs the loop (or any, while it does not run).
 * @return ll_ref, ll_unref: 0; ll_has_ref: 1 if referenced, 0 if not.
 *         LL_EBADHANDLE for a stale id or one of another kind (a loop,
 *         future, task, TLS config), LL_EWRONGTHREAD while another thread
 *         runs the loop.
 */
int ll_ref(uint64_t id);
int ll_unref(uint64_t id);
int ll_has_ref(uint64_t id);

/** ll_loop_walk kinds: what the id handed to an ll_walk_fn names. */
#define LL_KIND_HANDLE    1 /**< a pending ll_call_later/ll_call_at handle (not cancelled, not run) */
#define LL_KIND_TIMER     2 /**< an armed repeating timer (ll_timer_start) */
#define LL_KIND_TRANSPORT 3 /**< a transport before its LL_CONNECTION_LOST */
#define LL_KIND_SERVER    4 /**< a server not closed */
#define LL_KIND_PROCESS   5 /**< a process that has not exited */
#define LL_KIND_SIGNAL    6 /**< a signal handler: its id (ll_add_signal_handler_ex) */
#define LL_KIND_HOOK      7 /**< an active hook (ll_hook_add) */
#define LL_KIND_FS_WATCH  8 /**< an active file-system watcher (ll_fs_watch, ll_fs_poll) */

/** An ll_loop_walk callback: return nonzero to stop the walk. */
typedef int (*ll_walk_fn)(ll_loop loop, uint64_t id, int kind, void *arg);

/**
 * Call fn(loop, id, kind, arg) for every live object of the loop the host
 * has an id for, kind by kind in LL_KIND_* order, until fn returns
 * nonzero (libuv's uv_walk). The walk is over a snapshot taken first: fn
 * may cancel, close, stop or release the object it is given or any other;
 * an object ended or released by an earlier call is skipped, and one made
 * during the walk is not listed. Called on the loop's thread: from a
 * callback of the running loop, or while it does not run.
 * @return 0 (also when fn stopped it), LL_EINVAL (fn NULL), LL_EBADHANDLE,
 *         LL_ECLOSED, LL_EWRONGTHREAD (another thread runs the loop).
 */
int ll_loop_walk(ll_loop loop, ll_walk_fn fn, void *arg);

/* ---- File descriptors -------------------------------------------------- */

/**
 * Call cb(loop, fd, arg) every iteration while fd is readable
 * (level-triggered), replacing any reader already set for fd.
 * @return 0, -EBADF (closed or invalid fd), -EPERM (a regular file),
 *         -EBUSY (a transport or server of this loop owns fd:
 *         asyncio's "File descriptor is used by transport"; the owner is
 *         left as it was), LL_EINVAL (cb NULL), LL_ECLOSED, LL_EBADHANDLE,
 *         LL_EWRONGTHREAD.
 */
int ll_add_reader(ll_loop loop, int fd, ll_io_callback cb, void *arg);

/**
 * @return 1 if a reader was removed, 0 if none was set (also for an fd a
 * transport owns: its watch is not touched), or an error (LL_EWRONGTHREAD,
 * ...). Safe on a closed fd.
 */
int ll_remove_reader(ll_loop loop, int fd);

/** As ll_add_reader, for writability (the same errors, -EBUSY included). */
int ll_add_writer(ll_loop loop, int fd, ll_io_callback cb, void *arg);

/** As ll_remove_reader, for the writer. */
int ll_remove_writer(ll_loop loop, int fd);

/* ---- Executor ------------------------------------------------------------ */

/**
 * Work run on an executor thread: return a value, or set *err non-zero to fail.
 * Executor threads belong to the Go runtime, which sends a thread running one
 * call for more than ~10 ms its preemption signal (SIGURG; the handler does
 * nothing to C code and has SA_RESTART): a system call that a signal always
 * interrupts (nanosleep/usleep, poll, select, epoll_wait, sem_timedwait ...)
 * may return early with EINTR in long work, as in any program with signals;
 * retry it with the time left.
 */
typedef uintptr_t (*ll_work_fn)(void *arg, int *err);

/**
 * Run fn(arg, &err) on the loop's default thread pool; the returned future
 * is resolved on the loop thread with the value, or fails with err. If the
 * future is cancelled first, the value is ignored. Closing the loop with
 * work in flight is safe: the work finishes and its outcome is dropped.
 * @return 0, LL_EINVAL (fn or out NULL), LL_ESTATE (executor shut down), LL_ECLOSED, LL_EBADHANDLE,
 *         LL_ENOMEM (no id left: fn never runs).
 */
int ll_run_in_executor(ll_loop loop, ll_work_fn fn, void *arg, ll_future *out);

/** Work for ll_queue_work: runs on an executor thread; keep results in arg's memory. */
typedef void (*ll_queue_work_fn)(void *arg);

/**
 * libuv's uv_queue_work: run work(arg) on the default executor's threads,
 * then after(loop, arg) on the loop thread, batched with other callbacks.
 * No future is made, so this is the cheapest way to offload work; use
 * ll_run_in_executor when a task must await the outcome. If the loop is
 * closed before the work finishes, after is never called (work still runs
 * to completion).
 * @return 0, LL_EINVAL (work or after NULL), LL_ESTATE (executor shut down),
 *         LL_ECLOSED, LL_EBADHANDLE, LL_EWRONGTHREAD.
 */
int ll_queue_work(ll_loop loop, ll_queue_work_fn work, ll_callback after, void *arg);

/** Set how many worker threads the default executor may use (default min(32, ncpu+4); 1..1024). @return 0, LL_EINVAL, LL_ECLOSED, LL_EBADHANDLE. */
int ll_loop_set_executor_workers(ll_loop loop, int n);

/** Stop accepting executor work; *out finishes once queued and running work is done. @return 0, LL_EINVAL, LL_ECLOSED, LL_EBADHANDLE. */
int ll_loop_shutdown_default_executor(ll_loop loop, ll_future *out);

/* ---- Host queues (for language bindings) -------------------------------- */

/**
 * Runs the host's own ready callbacks (those it queued before this call) and
 * returns non-zero if it has more ready work for the next iteration.
 */
typedef int (*ll_host_run_fn)(ll_loop loop, void *arg);

/**
 * Let a host keep its own ready queue: a binding whose call_soon appends to
 * a queue of its own language pays no boundary crossing per callback. While
 * the host has work the loop does not block in poll, and each iteration
 * calls fn once, before the callbacks in the loop's own queue (so what the
 * host scheduled in the previous iteration runs before this iteration's I/O
 * and timers, as in asyncio). NULL removes it.
 * @return 0, LL_EBADHANDLE, LL_EWRONGTHREAD.
 */
int ll_loop_set_host_queue(ll_loop loop, ll_host_run_fn fn, void *arg);

/** Tell the loop that the host queue has work (call it when the host queues work outside fn). @return 0, LL_EBADHANDLE. */
int ll_loop_host_ready(ll_loop loop);

#ifdef __cplusplus
}
#endif

/* Futures and tasks: results to come, coroutines as step functions,
 * sleep, gather, wait_for, run. */
#include "libloop/future.h"
/* Network I/O: transports and protocols, servers, terminals, names. */
#include "libloop/transport.h"
/* Datagrams: UDP transports and their socket options. */
#include "libloop/udp.h"
/* Subprocesses and signals. */
#include "libloop/process.h"
/* TLS on Go's crypto/tls: configs, TLS connect/listen, start_tls. */
#include "libloop/tls.h"
/* Loop metrics: ll_loop_stats. */
#include "libloop/stats.h"
/* Files: open, read, write, stat ... on the loop's file pool, as futures. */
#include "libloop/fs.h"
/* File-system watchers: ll_fs_watch, ll_fs_poll. */
#include "libloop/fswatch.h"

#endif /* LIBLOOP_H */
