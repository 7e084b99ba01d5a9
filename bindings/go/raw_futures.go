// SPDX-License-Identifier: MIT

package libloop

import "unsafe"

// RawFutures holds the raw calls of the header's Futures, Tasks, Executor
// and Host queues sections, embedded in Raw (so raw.FutureNew works). The
// conventions are Raw's: ids are uint64, pointers unsafe.Pointer (C memory:
// Out.Ptr(), CBuf.Ptr(), or nil for NULL), C function addresses and void *
// args uintptr. ll_free_fn arguments take FreePtr() (with RegisterFree), a
// C function's address, or 0 for NULL; ll_done_callback and ll_step_fn take
// CallbackPtr(); ll_work_fn takes WorkPtr(); ll_queue_work's work and after
// take QueueWorkPtr() and QueueAfterPtr() with one RegisterQueueWork key;
// ll_host_run_fn takes HostQueuePtr().
type RawFutures struct {
	FutureNew                func(loop uint64, out unsafe.Pointer) int32                                    // ll_future_new
	FutureState              func(fut uint64) int32                                                         // ll_future_state
	FutureDone               func(fut uint64) int32                                                         // ll_future_done
	FutureSetResult          func(fut uint64, value, free uintptr) int32                                    // ll_future_set_result
	FutureSetException       func(fut uint64, code int32, msg unsafe.Pointer, payload, free uintptr) int32  // ll_future_set_exception
	FutureCancel             func(fut uint64, msg unsafe.Pointer) int32                                     // ll_future_cancel
	FutureResult             func(fut uint64, out unsafe.Pointer) int32                                     // ll_future_result
	FutureException          func(fut uint64, code, msg, payload unsafe.Pointer) int32                      // ll_future_exception
	FutureAddDoneCallback    func(fut uint64, cb, arg uintptr) int32                                        // ll_future_add_done_callback
	FutureRemoveDoneCallback func(fut uint64, cb, arg uintptr) int32                                        // ll_future_remove_done_callback
	TaskNew                  func(loop uint64, step, arg uintptr, out unsafe.Pointer) int32                 // ll_task_new
	TaskAwait                func(task, fut uint64) int32                                                   // ll_task_await
	TaskYield                func(task uint64) int32                                                        // ll_task_yield
	TaskSleep                func(task uint64, delay float64) int32                                         // ll_task_sleep
	TaskReturn               func(task uint64, value, free uintptr) int32                                   // ll_task_return
	TaskRaise                func(task uint64, code int32, msg unsafe.Pointer, payload, free uintptr) int32 // ll_task_raise
	TaskAwaited              func(task uint64, out unsafe.Pointer) int32                                    // ll_task_awaited
	TaskMustRaiseCancel      func(task uint64) int32                                                        // ll_task_must_raise_cancel
	TaskCancel               func(task uint64, msg unsafe.Pointer) int32                                    // ll_task_cancel
	TaskUncancel             func(task uint64) int32                                                        // ll_task_uncancel
	TaskCancelling           func(task uint64) int32                                                        // ll_task_cancelling
	FutureGetLoop            func(fut uint64, out unsafe.Pointer) int32                                     // ll_future_get_loop
	CurrentTask              func(loop uint64, out unsafe.Pointer) int32                                    // ll_current_task
	AllTasks                 func(loop uint64, out unsafe.Pointer, capacity uintptr) int32                  // ll_all_tasks

	RunUntilComplete func(loop, fut uint64) int32                                                                 // ll_loop_run_until_complete
	Sleep            func(loop uint64, delay float64, out unsafe.Pointer) int32                                   // ll_sleep
	Gather           func(loop uint64, n uintptr, futs unsafe.Pointer, returnExc int32, out unsafe.Pointer) int32 // ll_gather
	WaitFor          func(loop, fut uint64, timeout float64, out unsafe.Pointer) int32                            // ll_wait_for
	Run              func(step, arg uintptr, result unsafe.Pointer) int32                                         // ll_run

	RunInExecutor           func(loop uint64, fn, arg uintptr, out unsafe.Pointer) int32 // ll_run_in_executor
	QueueWork               func(loop uint64, work, after, arg uintptr) int32            // ll_queue_work
	SetExecutorWorkers      func(loop uint64, n int32) int32                             // ll_loop_set_executor_workers
	ShutdownDefaultExecutor func(loop uint64, out unsafe.Pointer) int32                  // ll_loop_shutdown_default_executor

	SetHostQueue func(loop uint64, fn, arg uintptr) int32 // ll_loop_set_host_queue
	HostReady    func(loop uint64) int32                  // ll_loop_host_ready
}

func (r *RawFutures) symbols() []struct {
	name string
	fptr any
} {
	return []struct {
		name string
		fptr any
	}{
		{"ll_future_new", &r.FutureNew},
		{"ll_future_state", &r.FutureState},
		{"ll_future_done", &r.FutureDone},
		{"ll_future_set_result", &r.FutureSetResult},
		{"ll_future_set_exception", &r.FutureSetException},
		{"ll_future_cancel", &r.FutureCancel},
		{"ll_future_result", &r.FutureResult},
		{"ll_future_exception", &r.FutureException},
		{"ll_future_add_done_callback", &r.FutureAddDoneCallback},
		{"ll_future_remove_done_callback", &r.FutureRemoveDoneCallback},
		{"ll_task_new", &r.TaskNew},
		{"ll_task_await", &r.TaskAwait},
		{"ll_task_yield", &r.TaskYield},
		{"ll_task_sleep", &r.TaskSleep},
		{"ll_task_return", &r.TaskReturn},
		{"ll_task_raise", &r.TaskRaise},
		{"ll_task_awaited", &r.TaskAwaited},
		{"ll_task_must_raise_cancel", &r.TaskMustRaiseCancel},
		{"ll_task_cancel", &r.TaskCancel},
		{"ll_task_uncancel", &r.TaskUncancel},
		{"ll_task_cancelling", &r.TaskCancelling},
		{"ll_future_get_loop", &r.FutureGetLoop},
		{"ll_current_task", &r.CurrentTask},
		{"ll_all_tasks", &r.AllTasks},
		{"ll_loop_run_until_complete", &r.RunUntilComplete},
		{"ll_sleep", &r.Sleep},
		{"ll_gather", &r.Gather},
		{"ll_wait_for", &r.WaitFor},
		{"ll_run", &r.Run},
		{"ll_run_in_executor", &r.RunInExecutor},
		{"ll_queue_work", &r.QueueWork},
		{"ll_loop_set_executor_workers", &r.SetExecutorWorkers},
		{"ll_loop_shutdown_default_executor", &r.ShutdownDefaultExecutor},
		{"ll_loop_set_host_queue", &r.SetHostQueue},
		{"ll_loop_host_ready", &r.HostReady},
	}
}
