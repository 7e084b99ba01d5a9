/* SPDX-License-Identifier: MIT */
/*
 * libloop/process.h — subprocesses and signals (included by libloop.h; do
 * not include it alone).
 *
 * asyncio's subprocess_exec and add_signal_handler; libuv's uv_spawn and
 * uv_signal_t. A child's pipes are transports (libloop/transport.h): their
 * events reach the process's protocol with ev->fd set to the child's fd.
 *
 * Threads: as transports, every call here is made on the loop's thread (or
 * while the loop is not running).
 */
#ifndef LIBLOOP_PROCESS_H
#define LIBLOOP_PROCESS_H

#ifdef __cplusplus
extern "C" {
#endif

/* ---- Processes ----------------------------------------------------------- */

#define LL_STDIO_INHERIT (-1) /**< the child shares the parent's fd */
#define LL_STDIO_PIPE    (-2) /**< a pipe: a transport of the process (ll_process_pipe) */
#define LL_STDIO_DEVNULL (-3) /**< /dev/null */
#define LL_STDIO_STDOUT  (-4) /**< stderr only: the same as the child's stdout (asyncio's STDOUT) */

#define LL_PROCESS_NEW_SESSION 1 /**< setsid(): the child leads a new session (asyncio's start_new_session) */
#define LL_PROCESS_NEW_GROUP   2 /**< setpgid(0, 0): the child leads a new process group */

/** What to run and how. Strings and arrays are copied by ll_spawn. */
typedef struct ll_process_options {
    const char *file;          /**< the program; searched in PATH (the env's PATH when env sets one) when it has no '/' */
    const char *const *argv;   /**< NULL-terminated, argv[0] included; any length execve takes */
    const char *const *env;    /**< NULL-terminated "NAME=value"; NULL = inherit the parent's; any length execve takes */
    const char *cwd;           /**< NULL = inherit; "" names no directory (-ENOENT, as Popen) */
    int stdio[3];              /**< child fds 0..2: LL_STDIO_*, or an fd >= 0 the child gets as is */
    int flags;                 /**< LL_PROCESS_NEW_SESSION, LL_PROCESS_NEW_GROUP */
} ll_process_options;

/**
 * Start a child (asyncio's subprocess_exec). It is started vfork-style and
 * goes straight to exec, so a process carrying the Go runtime is safe. The
 * child inherits its stdio and nothing else: every other fd is closed in it
 * (Python's close_fds=True), with one close_range (a vfork clone on Linux,
 * posix_spawn's closefrom elsewhere; stdio sources that cross, e.g. stdout
 * from fd 0 while stdin is a pipe, are handled); ll_spawn_ex can keep more
 * (pass_fds, inherit_fds). The child
 * starts with no blocked signal and with SIGPIPE and SIGXFSZ at their
 * defaults even if the host ignores them (Python's restore_signals). Events reach fn with arg:
 *  - each LL_STDIO_PIPE is a transport: LL_CONNECTION_MADE, then
 *    LL_DATA_RECEIVED (fd 1, 2), LL_EOF_RECEIVED and LL_CONNECTION_LOST with
 *    ev->fd the child's fd and ev->transport the pipe's id (ll_process_pipe);
 *  - LL_PROCESS_EXITED once, ev->code the return code (exit status, or
 *    -signal as asyncio's returncode), ev->transport the process id.
 * The exit is watched without SIGCHLD (a pidfd on Linux, kqueue's
 * EVFILT_PROC on macOS/BSD; a waiting thread where neither works) and the
 * child is always reaped: no zombie is left, also when
 * the loop closes first.
 * @return 0; -ENOENT, -EACCES, -ENOTDIR for a program (or cwd) that cannot
 *         be run — an error here, never a child that exits 127 (cwd ""
 *         is -ENOENT); -E2BIG when argv and env are more than execve takes
 *         (ARG_MAX; the library sets no count of its own, but refuses an
 *         array of over 2^20 entries, past what any execve takes, so that
 *         a missing NULL is not read on without end); LL_EINVAL
 *         (NULL opts/file/argv/out, empty argv, a bad stdio value, unknown
 *         flags); -EBADF (a stdio fd that is not open: nothing was made);
 *         LL_EBADHANDLE; LL_ECLOSED; LL_ENOMEM (no id left for the
 *         process or a pipe: no child was started).
 */
int ll_spawn(ll_loop loop, const ll_process_options *opts, ll_protocol_fn fn, void *arg, ll_process *out);

/**
 * What Python's Popen offers beyond ll_process_options (pass_fds,
 * close_fds=False, user, group, extra_groups, umask, process_group,
 * pipesize), for ll_spawn_ex. Set size to sizeof(ll_spawn_extra): the
 * struct may grow at its end, and the library reads only the fields the
 * caller's size covers (a larger size from a newer header is accepted if
 * the fields this library does not know are all zero).
 * Start from LL_SPAWN_EXTRA_INIT: 0 is a valid uid, gid and umask.
 */
typedef struct ll_spawn_extra {
    size_t size;                 /**< sizeof(ll_spawn_extra) */
    /** fds the child keeps at the same numbers, close-on-exec cleared (0..2: its stdio already, no change) */
    const int *pass_fds;
    int n_pass_fds;              /**< entries in pass_fds (0: none) */
    int inherit_fds;             /**< nonzero: every fd without FD_CLOEXEC stays open (close_fds=False) */
    int uid;                     /**< setresuid(uid) in the child; -1 = unchanged */
    int gid;                     /**< setresgid(gid) in the child; -1 = unchanged */
    const unsigned int *groups;  /**< supplementary groups (setgroups) */
    int n_groups;                /**< entries in groups; 0 drops them all; -1 = unchanged */
    int umask;                   /**< the child's umask, 0..0777; -1 = unchanged */
    int pgid;                    /**< -1 = none (opts->flags decide); 0 = a new group; > 0 = join group pgid */
    int pipe_size;               /**< F_SETPIPE_SZ for each LL_STDIO_PIPE (Linux); 0 = the system's default */
} ll_spawn_extra;

/** An ll_spawn_extra that asks for nothing (ll_spawn_ex then does what ll_spawn does). */
#define LL_SPAWN_EXTRA_INIT {sizeof(ll_spawn_extra), NULL, 0, 0, -1, -1, NULL, -1, -1, -1, 0}

/**
 * ll_spawn with extras (asyncio's subprocess_exec with Popen's pass_fds,
 * close_fds=False, user, group, extra_groups, umask, process_group,
 * pipesize); extra NULL is ll_spawn. The child, before exec, in Popen's
 * order: cwd, umask, the session or process group, setgroups, setresgid,
 * setresuid (raw syscalls: the host's threads keep their ids), its stdio,
 * the pass fds, then every other fd closed (unless inherit_fds). A step
 * that fails is this call's error, and the child is reaped: never a child
 * that exits 127.
 * @return what ll_spawn returns, and LL_EINVAL (size too small or too
 *         large, a negative n_pass_fds or pass fd, a NULL array with a
 *         count, n_groups < -1, uid or gid < -1, umask outside -1..0777,
 *         pgid < -1, pgid >= 0 with LL_PROCESS_NEW_SESSION, pgid > 0 with
 *         LL_PROCESS_NEW_GROUP, pipe_size < 0); -EBADF (a pass fd that is
 *         not open: nothing was started); -EPERM (setresuid, setresgid,
 *         setgroups or setpgid refused: not root, or no such group in the
 *         session); -EINVAL (F_SETPIPE_SZ refused the size; -EPERM above
 *         the limit for a non-root host); -ENOTSUP where the platform
 *         cannot do an extra: pipe_size outside Linux, and where posix_spawn
 *         starts children (not Linux) uid, gid, groups, umask, and pass
 *         fds without inherit_fds.
 */
int ll_spawn_ex(ll_loop loop, const ll_process_options *opts, const ll_spawn_extra *extra, ll_protocol_fn fn,
                void *arg, ll_process *out);

/** The child's pid in *pid. @return 0, LL_EINVAL (NULL pid), LL_EBADHANDLE. */
int ll_process_pid(ll_process p, int *pid);

/**
 * The transport of the child's fd child_fd (0, 1, 2) when it is a pipe:
 * write to stdin with ll_transport_write (with back-pressure events), close
 * it with ll_transport_close. The id is valid until that pipe's
 * LL_CONNECTION_LOST. @return 0, LL_EINVAL (not a pipe, NULL out), LL_ECLOSED
 * (the pipe has closed), LL_EBADHANDLE.
 */
int ll_process_pipe(ll_process p, int child_fd, ll_transport *out);

/**
 * Send sig to the child. After it has exited this is -ESRCH and nothing is
 * sent: a recycled pid is never signalled (the pidfd is used on Linux).
 * @return 0, -ESRCH, LL_EINVAL (sig out of range), LL_EBADHANDLE.
 */
int ll_process_send_signal(ll_process p, int sig);
/** ll_process_send_signal(p, SIGTERM). */
int ll_process_terminate(ll_process p);
/** ll_process_send_signal(p, SIGKILL). */
int ll_process_kill(ll_process p);

/** The return code in *out once the child has exited. @return 0, LL_ESTATE (still running), LL_EINVAL, LL_EBADHANDLE. */
int ll_process_returncode(ll_process p, int *out);

/**
 * A future that finishes with the return code (as intptr_t in the value)
 * when the child exits, at once if it already has (asyncio's wait()).
 * @return 0, LL_EINVAL (NULL out), LL_EBADHANDLE, LL_ECLOSED.
 */
int ll_process_wait(ll_process p, ll_future *out);

/* A process id is released with ll_release. The child is not killed; it is
 * still reaped when it exits, and its pipes' events still reach fn. */

/* ---- Signals --------------------------------------------------------------- */

/**
 * Run cb(loop, arg) on the loop's thread, in an iteration after each
 * delivery of signum (asyncio's add_signal_handler), replacing a callback
 * signum already had on this loop. Several loops may watch one signal; each
 * gets every delivery. The library installs its own handler for signum only
 * (never for a signal the host did not name): async-signal-safe (it writes
 * one byte to each watching loop's pipe), SA_ONSTACK (the Go runtime
 * requires it) and SA_RESTART. The signals the Go runtime itself handles in
 * a shared library (SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGTRAP: turned into Go
 * panics; SIGURG: goroutine preemption; SIGPIPE: Go drops the ones its
 * writes raise) are refused, so the runtime's handlers are never replaced.
 * The signals the C library keeps for itself (glibc's 32 and 33, below
 * SIGRTMIN: thread cancellation and setxid) are refused too. Every signal
 * number that cannot be taken is the same error, LL_EINVAL.
 * @return 0, LL_EINVAL (SIGKILL, SIGSTOP, a signal above, one of the C
 *         library's, out of range, NULL cb), -ENOSPC (more loops than the
 *         library's table holds watch signum), LL_EBADHANDLE, LL_ECLOSED.
 */
int ll_add_signal_handler(ll_loop loop, int signum, ll_callback cb, void *arg);

/**
 * Remove signum's callback from this loop. When no loop watches signum any
 * more, the disposition the host had before the first ll_add_signal_handler
 * comes back. Closing or releasing a loop removes its signal handlers.
 * @return 1 if one was removed, 0 if none, LL_EINVAL, LL_EBADHANDLE.
 */
int ll_remove_signal_handler(ll_loop loop, int signum);

/**
 * ll_add_signal_handler, giving the handler's id in *out: the id
 * ll_loop_walk lists with LL_KIND_SIGNAL, for ll_ref, ll_unref and
 * ll_has_ref (an unreferenced handler still runs but does not keep
 * ll_loop_run(LL_RUN_DEFAULT) going). ll_add_signal_handler makes the same
 * id without handing it out. The id is the loop's: it goes stale when the
 * handler goes (ll_remove_signal_handler, a new handler for signum, the
 * loop's close); ll_release of it removes the handler.
 * @return as ll_add_signal_handler; LL_EINVAL for NULL out too.
 */
int ll_add_signal_handler_ex(ll_loop loop, int signum, ll_callback cb, void *arg, ll_handle *out);

#ifdef __cplusplus
}
#endif

#endif /* LIBLOOP_PROCESS_H */
