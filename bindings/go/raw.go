// SPDX-License-Identifier: MIT

package libloop

import (
	"fmt"
	"unsafe"

	"github.com/ebitengine/purego"
)

// Run modes of Raw.RunOnce (LL_RUN_ONCE and LL_RUN_NOWAIT) and of
// Raw.LoopRun and Loop.Run (all three). Not libuv's values: ll_loop_run_once
// fixed the first two before LL_RUN_DEFAULT came.
const (
	RunModeOnce    int32 = 0 // LL_RUN_ONCE: block in poll until something is due
	RunModeNowait  int32 = 1 // LL_RUN_NOWAIT: never block
	RunModeDefault int32 = 2 // LL_RUN_DEFAULT: until nothing referenced is left
)

// Raw calls the ll_ functions exactly as include/libloop.h declares them:
// ids are uint64, int results int32, pointers unsafe.Pointer (pass C memory
// such as Out.Ptr(), or nil for NULL), callbacks C function addresses (see
// CallbackPtr) and their void *arg a uintptr. Nothing is checked on the Go
// side, so a raw call can pass id 0, stale, forged or wrong-kind ids and NULL.
type Raw struct {
	Version       func() int32                                // ll_version
	VersionString func() unsafe.Pointer                       // ll_version_string
	StrError      func(code int32) unsafe.Pointer             // ll_strerror
	ErrName       func(code int32) unsafe.Pointer             // ll_err_name
	Release       func(id uint64) int32                       // ll_release
	LoopNew       func(out unsafe.Pointer) int32              // ll_loop_new
	LoopClose     func(loop uint64) int32                     // ll_loop_close
	RunForever    func(loop uint64) int32                     // ll_loop_run_forever
	RunOnce       func(loop uint64, mode int32) int32         // ll_loop_run_once
	Stop          func(loop uint64) int32                     // ll_loop_stop
	IsRunning     func(loop uint64) int32                     // ll_loop_is_running
	IsClosed      func(loop uint64) int32                     // ll_loop_is_closed
	Time          func(loop uint64) float64                   // ll_loop_time
	SetDebug      func(loop uint64, enabled int32) int32      // ll_loop_set_debug
	GetDebug      func(loop uint64) int32                     // ll_loop_get_debug
	BackendFD     func(loop uint64) int32                     // ll_loop_backend_fd
	LoopStats     func(loop uint64, out unsafe.Pointer) int32 // ll_loop_stats; out is a struct ll_loop_stats, its size set

	LoopNextTimeout func(loop uint64) int32                                                             // ll_loop_next_timeout
	HookAdd         func(loop uint64, kind int32, fn, arg uintptr, out unsafe.Pointer) int32            // ll_hook_add
	TimerStart      func(loop uint64, first, repeat float64, cb, arg uintptr, out unsafe.Pointer) int32 // ll_timer_start
	TimerAgain      func(timer uint64) int32                                                            // ll_timer_again
	TimerSetRepeat  func(timer uint64, repeat float64) int32                                            // ll_timer_set_repeat
	LoopRun         func(loop uint64, mode int32) int32                                                 // ll_loop_run
	Ref             func(id uint64) int32                                                               // ll_ref
	Unref           func(id uint64) int32                                                               // ll_unref
	HasRef          func(id uint64) int32                                                               // ll_has_ref
	LoopWalk        func(loop uint64, fn, arg uintptr) int32                                            // ll_loop_walk

	FSWatch func(loop uint64, path unsafe.Pointer, flags int32, fn, arg uintptr, out unsafe.Pointer) int32      // ll_fs_watch
	FSPoll  func(loop uint64, path unsafe.Pointer, interval float64, fn, arg uintptr, out unsafe.Pointer) int32 // ll_fs_poll

	SetSlowCallbackDuration func(loop uint64, secs float64) int32         // ll_loop_set_slow_callback_duration
	SetExceptionHandler     func(loop uint64, handler, arg uintptr) int32 // ll_loop_set_exception_handler

	CallSoon           func(loop uint64, cb, arg uintptr, out unsafe.Pointer) int32                // ll_call_soon
	CallLater          func(loop uint64, delay float64, cb, arg uintptr, out unsafe.Pointer) int32 // ll_call_later
	CallAt             func(loop uint64, when float64, cb, arg uintptr, out unsafe.Pointer) int32  // ll_call_at
	CallSoonThreadsafe func(loop uint64, cb, arg uintptr) int32                                    // ll_call_soon_threadsafe
	Wakeup             func(loop uint64) int32                                                     // ll_loop_wakeup
	HandleCancel       func(handle uint64) int32                                                   // ll_handle_cancel
	HandleCancelled    func(handle uint64) int32                                                   // ll_handle_cancelled
	TimerWhen          func(handle uint64) float64                                                 // ll_timer_when

	AddReader    func(loop uint64, fd int32, cb, arg uintptr) int32 // ll_add_reader
	RemoveReader func(loop uint64, fd int32) int32                  // ll_remove_reader
	AddWriter    func(loop uint64, fd int32, cb, arg uintptr) int32 // ll_add_writer
	RemoveWriter func(loop uint64, fd int32) int32                  // ll_remove_writer

	RawFutures // futures, tasks, helpers, executor, host queue (raw_futures.go)
	RawNet     // transports, servers, datagrams, names (raw_net.go)
	RawTLS     // TLS configs, connections, accessors (raw_tls.go)
	RawFS      // file calls (fs.go)
}

// symbols lists every function of the header with the Raw field bound to it.
// To bind a new ll_ function, add a Raw field and a line here.
func (r *Raw) symbols() []struct {
	name string
	fptr any
} {
	return append([]struct {
		name string
		fptr any
	}{
		{"ll_version", &r.Version},
		{"ll_version_string", &r.VersionString},
		{"ll_strerror", &r.StrError},
		{"ll_err_name", &r.ErrName},
		{"ll_release", &r.Release},
		{"ll_loop_new", &r.LoopNew},
		{"ll_loop_close", &r.LoopClose},
		{"ll_loop_run_forever", &r.RunForever},
		{"ll_loop_run_once", &r.RunOnce},
		{"ll_loop_stop", &r.Stop},
		{"ll_loop_is_running", &r.IsRunning},
		{"ll_loop_is_closed", &r.IsClosed},
		{"ll_loop_time", &r.Time},
		{"ll_loop_set_debug", &r.SetDebug},
		{"ll_loop_get_debug", &r.GetDebug},
		{"ll_loop_backend_fd", &r.BackendFD},
		{"ll_loop_next_timeout", &r.LoopNextTimeout},
		{"ll_hook_add", &r.HookAdd},
		{"ll_timer_start", &r.TimerStart},
		{"ll_timer_again", &r.TimerAgain},
		{"ll_timer_set_repeat", &r.TimerSetRepeat},
		{"ll_loop_run", &r.LoopRun},
		{"ll_ref", &r.Ref},
		{"ll_unref", &r.Unref},
		{"ll_has_ref", &r.HasRef},
		{"ll_loop_walk", &r.LoopWalk},
		{"ll_fs_watch", &r.FSWatch},
		{"ll_fs_poll", &r.FSPoll},
		{"ll_loop_stats", &r.LoopStats},
		{"ll_loop_set_slow_callback_duration", &r.SetSlowCallbackDuration},
		{"ll_loop_set_exception_handler", &r.SetExceptionHandler},
		{"ll_call_soon", &r.CallSoon},
		{"ll_call_later", &r.CallLater},
		{"ll_call_at", &r.CallAt},
		{"ll_call_soon_threadsafe", &r.CallSoonThreadsafe},
		{"ll_loop_wakeup", &r.Wakeup},
		{"ll_handle_cancel", &r.HandleCancel},
		{"ll_handle_cancelled", &r.HandleCancelled},
		{"ll_timer_when", &r.TimerWhen},
		{"ll_add_reader", &r.AddReader},
		{"ll_remove_reader", &r.RemoveReader},
		{"ll_add_writer", &r.AddWriter},
		{"ll_remove_writer", &r.RemoveWriter},
	}, append(append(append(r.RawFutures.symbols(), r.RawNet.symbols()...), r.RawTLS.symbols()...), r.RawFS.symbols()...)...)
}

// bindRaw resolves every symbol of the header in the library handle h.
func bindRaw(h uintptr, path string) (*Raw, error) {
	r := &Raw{}
	for _, s := range r.symbols() {
		addr, err := purego.Dlsym(h, s.name)
		if err != nil || addr == 0 {
			return nil, fmt.Errorf("libloop: %s has no symbol %s: %v", path, s.name, err)
		}
		purego.RegisterFunc(s.fptr, addr)
	}
	return r, nil
}
