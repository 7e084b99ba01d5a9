/* SPDX-License-Identifier: MIT */
/*
 * libloop/future.h — futures and tasks (included by libloop.h; do not
 * include it alone).
 *
 * A future is a result to come: pending, then finished with a value or an
 * error code, or cancelled; done callbacks run through call_soon. A task is
 * a coroutine written as a step function, and is itself a future: every
 * ll_future_* call takes a task id. asyncio keeps the same split between
 * its event loop and futures.py / tasks.py; the loop's own calls are in
 * libloop.h.
 */
#ifndef LIBLOOP_FUTURE_H
#define LIBLOOP_FUTURE_H

#ifdef __cplusplus
extern "C" {
#endif

/* ---- Futures ----------------------------------------------------------- */

/** A future's state (ll_future_state). */
#define LL_PENDING   0
#define LL_CANCELLED 1
#define LL_FINISHED  2

/** Called (on the loop thread, via call_soon) once a future is done. */
typedef void (*ll_done_callback)(ll_future fut, void *arg);
/** Frees a host value stored in a future; called exactly once. */
typedef void (*ll_free_fn)(uintptr_t value);

/**
 * Create a pending future on loop. The host holds one reference (ll_release).
 * The id stays valid while the loop still uses the future (a task awaiting
 * it, a gather, a queued done callback), even after ll_release; closing the
 * loop drops those uses, so a released future's id then goes stale.
 * @return 0, LL_EINVAL (out NULL), LL_ECLOSED, LL_EBADHANDLE.
 */
int ll_future_new(ll_loop loop, ll_future *out);

/** @return LL_PENDING, LL_CANCELLED or LL_FINISHED; or LL_EBADHANDLE. Works on task ids. */
int ll_future_state(ll_future fut);
/** @return 1 if done (finished or cancelled), 0 if pending, or LL_EBADHANDLE. */
int ll_future_done(ll_future fut);

/**
 * Finish the future with value. free (may be NULL) is called exactly once
 * with value when the library no longer references it (after the future is
 * released by the host and by the loop). Done callbacks are scheduled.
 * @return 0, LL_ESTATE (already done, or a task id: a task's outcome comes
 *         from its steps), LL_EBADHANDLE, LL_EWRONGTHREAD (to finish a future
 *         from a worker thread, post a callback that does it with
 *         ll_call_soon_threadsafe, or use ll_run_in_executor).
 */
int ll_future_set_result(ll_future fut, uintptr_t value, ll_free_fn free);

/**
 * Fail the future with an error code (non-zero and not LL_ECANCELLED), a
 * message (copied; may be NULL) and a host payload freed like a result.
 * @return 0, LL_EINVAL (code 0 or LL_ECANCELLED), LL_ESTATE, LL_EBADHANDLE, LL_EWRONGTHREAD.
 */
int ll_future_set_exception(ll_future fut, int code, const char *message, uintptr_t payload, ll_free_fn free);

/**
 * Cancel the future (msg copied; may be NULL). On a task this is
 * ll_task_cancel. On a gather future it cancels the children.
 * @return 1 if cancelled (or, for a task, cancellation requested), 0 if it
 *         was already done, LL_EBADHANDLE, LL_EWRONGTHREAD.
 */
int ll_future_cancel(ll_future fut, const char *msg);

/**
 * Get the result. out may be NULL.
 * @return 0; LL_ESTATE if pending; LL_ECANCELLED if cancelled; the
 *         exception's code if it failed; LL_EBADHANDLE.
 */
int ll_future_result(ll_future fut, uintptr_t *out);

/**
 * Get the exception: *code is 0 when the future finished with a result.
 * *message stays valid while the future id does. Any out pointer may be NULL.
 * Marks the exception retrieved.
 * @return 0, LL_ESTATE (pending), LL_ECANCELLED, LL_EBADHANDLE.
 */
int ll_future_exception(ll_future fut, int *code, const char **message, uintptr_t *payload);

/**
 * Call cb(fut, arg) via call_soon once the future is done, in registration
 * order; at once (scheduled) if it is already done.
 * @return 0, LL_EINVAL (cb NULL), LL_EBADHANDLE.
 */
int ll_future_add_done_callback(ll_future fut, ll_done_callback cb, void *arg);

/** Remove every (cb, arg) registration not yet scheduled. @return how many were removed, or LL_EBADHANDLE. */
int ll_future_remove_done_callback(ll_future fut, ll_done_callback cb, void *arg);

/* ---- Tasks: coroutines as step functions -------------------------------- */

/** A task's step: advance the coroutine, then call exactly one of
 * ll_task_await, ll_task_yield, ll_task_return or ll_task_raise. */
typedef void (*ll_step_fn)(ll_task task, void *arg);

/**
 * Create a task (it is also a future) and schedule its first step with
 * call_soon. The host holds one reference; the loop holds its own until the
 * task is done, so the id stays valid for the step function meanwhile.
 * A step that calls none of await/yield/return/raise fails the task with
 * LL_ESTATE; so does awaiting itself or a future of another loop.
 * @return 0, LL_EINVAL (out NULL or step NULL), LL_ECLOSED, LL_EBADHANDLE,
 *         LL_ENOMEM (no id left: the step never runs).
 */
int ll_task_new(ll_loop loop, ll_step_fn step, void *arg, ll_task *out);

/** Inside a step: suspend until fut is done, then step again. @return 0, LL_ESTATE (not in a step, outcome already chosen, awaiting itself or another loop's future), LL_EBADHANDLE. */
int ll_task_await(ll_task task, ll_future fut);
/** Inside a step: step again in the next iteration. @return 0, LL_ESTATE, LL_EBADHANDLE. */
int ll_task_yield(ll_task task);
/**
 * Inside a step: suspend the task for delay seconds, then step again; one
 * call for what ll_sleep + ll_task_await + ll_release do, with no future for
 * the host to hold. delay <= 0 is a bare yield (asyncio.sleep(0)) and, like
 * ll_task_yield on the task whose step is running, is answered without
 * entering Go. After the sleep, ll_task_awaited gives 0; if the task was
 * cancelled meanwhile, ll_task_must_raise_cancel gives 1.
 * @return 0, LL_EINVAL (NaN or oversize), LL_ESTATE, LL_EBADHANDLE.
 */
int ll_task_sleep(ll_task task, double delay);

/** Inside a step: finish with value (freed as ll_future_set_result). If the task was cancelled during this step it ends cancelled and value is freed. @return 0, LL_ESTATE, LL_EBADHANDLE. */
int ll_task_return(ll_task task, uintptr_t value, ll_free_fn free);
/** Inside a step: fail with code; LL_ECANCELLED leaves the task cancelled. @return 0, LL_EINVAL (code 0), LL_ESTATE, LL_EBADHANDLE. */
int ll_task_raise(ll_task task, int code, const char *message, uintptr_t payload, ll_free_fn free);

/** Inside a step: *out = the future whose completion woke this step (0 on the first step or after a yield). @return 0, LL_ESTATE (not in a step), LL_EINVAL, LL_EBADHANDLE. */
int ll_task_awaited(ll_task task, ll_future *out);
/** Inside a step: @return 1 if the host must throw a cancellation into its coroutine now (the task was cancelled, or the awaited future ended cancelled or failed with LL_ECANCELLED, as a cancelled gather does), else 0; or LL_EBADHANDLE. */
int ll_task_must_raise_cancel(ll_task task);

/**
 * Request cancellation (asyncio's Task.cancel): cancels the awaited future
 * if any, else the next step must raise cancellation.
 * @return 1 if requested, 0 if the task is already done, LL_EBADHANDLE.
 */
int ll_task_cancel(ll_task task, const char *msg);
/** @return the number of cancellation requests after decrementing it (not below 0), or LL_EBADHANDLE. */
int ll_task_uncancel(ll_task task);
/** @return the number of pending cancellation requests, or LL_EBADHANDLE. */
int ll_task_cancelling(ll_task task);

/** *out = the loop a future or task belongs to (so a step can reach its loop). @return 0, LL_EINVAL (out NULL), LL_EBADHANDLE. */
int ll_future_get_loop(ll_future fut, ll_loop *out);

/** *out = the task whose step is running on loop, or 0. @return 0, LL_EINVAL, LL_EBADHANDLE. */
int ll_current_task(ll_loop loop, ll_task *out);
/** Fill out[0..cap) with the loop's tasks that are not done. @return how many there are (may exceed cap), LL_EINVAL, LL_EBADHANDLE. */
int ll_all_tasks(ll_loop loop, ll_task *out, size_t cap);

/**
 * Run the loop until fut is done (asyncio's run_until_complete: the
 * iteration in which it completes finishes first).
 * @return 0 once fut is done (whatever its outcome; read it with
 *         ll_future_result); LL_ESTOPPED if ll_loop_stop ended the run
 *         first; LL_ERUNNING, LL_ECLOSED, LL_EINVAL (fut of another loop), LL_EBADHANDLE,
 *         LL_EFORKED.
 */
int ll_loop_run_until_complete(ll_loop loop, ll_future fut);

/**
 * A future that finishes with value 0 after delay seconds; cancelling it
 * cancels the timer. With delay <= 0 the future is already finished, so a
 * task awaiting it resumes in the next iteration (asyncio.sleep(0)).
 * @return 0, LL_EINVAL (NaN, oversize, out NULL), LL_ECLOSED, LL_EBADHANDLE.
 */
int ll_sleep(ll_loop loop, double delay, ll_future *out);

/**
 * A future that finishes when all n futures have, with the value n (read
 * each child for its outcome). Without return_exceptions it fails as soon
 * as a child fails (that child's code and message) or is cancelled
 * (LL_ECANCELLED). Cancelling it cancels the children; once they are done
 * it fails with LL_ECANCELLED. As asyncio's gather, it never ends in the
 * LL_CANCELLED state: a cancelled gather is LL_FINISHED with the exception
 * LL_ECANCELLED, and a gather, wait_for or task awaiting it ends in a
 * cancellation in turn.
 * @return 0, LL_EINVAL (futs NULL with n > 0, out NULL, a child of another loop),
 *         LL_ECLOSED, LL_EBADHANDLE, LL_EWRONGTHREAD.
 */
int ll_gather(ll_loop loop, size_t n, const ll_future *futs, int return_exceptions, ll_future *out);

/**
 * A future that takes fut's outcome, unless timeout seconds pass first: then
 * fut is cancelled and the returned future fails with LL_ETIMEDOUT once fut
 * ends cancelled or fails with LL_ECANCELLED (or takes fut's result if fut
 * finished anyway). timeout <= 0 times out at once; INFINITY, or any
 * timeout past about 100 years, never. A result value stays owned by fut.
 * @return 0, LL_EINVAL (NaN, out NULL, other loop), LL_ECLOSED, LL_EBADHANDLE,
 *         LL_EWRONGTHREAD, LL_ENOMEM (no id left: nothing was done).
 */
int ll_wait_for(ll_loop loop, ll_future fut, double timeout, ll_future *out);

/**
 * asyncio.run: create a loop, run a task of main_step to completion, cancel
 * the tasks left, shut the executor down and close the loop. *result (may be
 * NULL) receives the task's value, whose ownership passes to the caller.
 * @return 0, or the task's error code (LL_ECANCELLED if it was cancelled),
 *         LL_ERUNNING if a loop already runs on this thread, LL_EINVAL,
 *         LL_EFORKED in a fork() child.
 */
int ll_run(ll_step_fn main_step, void *arg, uintptr_t *result);

#ifdef __cplusplus
}
#endif

#endif /* LIBLOOP_FUTURE_H */
