// SPDX-License-Identifier: MIT

// Package libloop is the purego binding of libloop.so, the C shared library
// of libloop (an asyncio-style event loop). It loads the library at run time
// with purego, without cgo.
//
// A Go program that needs no C code should import the pure-Go core,
// github.com/libloop/libloop/libloop, which is the same loop with one Go
// runtime and no C boundary (see its Example). This binding exists for two
// jobs: testing libloop.so from Go (the suite in tests/ drives the C ABI
// through it, including bad ids and NULL pointers), and programs that must
// share one loop with C code that uses the C ABI; for these it offers the
// core's Go-shaped calls too (durations, contexts, typed futures and
// executor work, name lookups, net.Conn and net.PacketConn: see below).
//
// The library is found through the LIBLOOP_LIBRARY environment variable,
// else <repo>/build/libloop.so next to this source tree, else the system's
// "libloop.so" (dlopen's search path). Open loads it once per process;
// NewLoop and the package-level helpers call Open for you.
//
// Two layers are offered:
//
//   - The idiomatic layer: Loop, Handle, Error and ErrorContext; Future and
//     Task (asyncio's, with tasks written as Go step functions); the helpers
//     Loop.RunUntilComplete, Sleep, Gather, WaitFor and Run (asyncio.run);
//     the executor (Loop.RunInExecutor, Loop.QueueWork) and the host queue
//     (Loop.SetHostQueue); network I/O in asyncio's transport/protocol
//     model: Loop.DialTCP, DialUnix, ListenTCP, ListenUnix, OpenTransport,
//     OpenUDP and GetAddrInfo, a Transport (Write, WriteEOF, Close, Abort,
//     PauseReading, SendTo, Sendfile ...) and a Protocol interface
//     (BaseProtocol to embed, or ProtocolFuncs). Callbacks are Go funcs;
//     ids, C memory and the callback table are managed for you, and entries are freed once they
//     can no longer be called (a one-shot that ran or was cancelled, a task
//     that is done, anything of a loop that was closed), so a long-running
//     program does not leak.
//   - The raw layer: Lib.Raw calls each ll_ function exactly as the C header
//     declares it, with raw ids, unsafe.Pointer out parameters (see Out) and
//     C function addresses (see CallbackPtr). It exists so tests can pass bad
//     ids and NULL pointers.
//
// Callbacks: purego can create only about 2000 C callbacks per process and
// never frees one, so the binding creates one fixed trampoline per C callback
// signature and routes each call by its void *arg, which is a key into a
// Go-side table (never a Go pointer). Callbacks run on the thread that runs
// the loop; they must not call runtime.Goexit (t.FailNow, t.Fatal) because
// that cannot unwind through the C frames below them. A panic in a callback
// is recovered and reported to the loop's exception handler.
//
// Transport events reach Go in batches through ll_loop_set_event_batch: one
// crossing carries a whole delivery's events, routed in Go by transport id
// (see events.go for the design and its measurement). The []byte a
// Protocol's DataReceived or DatagramReceived gets is a view of the
// library's C read buffer, valid only during that call; writes are copied
// into C memory before they cross.
//
// Free functions (ll_free_fn) get the value alone and no arg, so Go free
// funcs given with a value (Future.SetResult, Task.Return, ...) are routed
// by the value: see RegisterFree for the rule. Executor work (ll_work_fn,
// ll_queue_work_fn) runs on the library's own worker threads; purego adopts
// each such thread for the call, so work funcs are plain Go funcs too, but
// must not touch the loop.
//
// Threads: as in C, a Loop and its Handles are used from the thread running
// the loop, except CallSoonThreadsafe and Wakeup, which any goroutine may
// call, and the calls made for other goroutines while a goroutine runs the
// loop: Future.Wait, TypedFuture.Wait, Await, DialFuture.Wait, and a Conn's,
// Listener's or PacketConn's methods (Loop.DialConn, Loop.ListenConn,
// Loop.ListenPacket). These post to the
// loop and block on a channel; called from one of the loop's own callbacks
// they would block the loop.
//
// What a Go programmer expects, as the core offers it:
//
//   - time.Duration: a call that took a time.Duration from the start has
//     the plain name and a float-seconds form with a Seconds suffix
//     (CallLater and CallLaterSeconds, Sleep and SleepSeconds, WaitFor and
//     WaitForSeconds, Task.Sleep and Task.SleepSeconds). A call first
//     published with float seconds keeps its name and signature, and its
//     time.Duration form carries a Duration suffix, as the core names its
//     own: Loop.StartTimerDuration, Timer.SetRepeatDuration,
//     Timer.WhenDuration, Loop.CallAtDuration, Handle.WhenDuration,
//     TLSConfig.SetTimeoutsDuration, and Loop.Now (the loop's clock, Time,
//     as a Duration).
//   - context.Context: Loop.RunUntilCompleteContext on the loop's
//     goroutine; Wait(ctx) from others (a done context cancels the
//     future); Loop.WaitForContext (WaitFor bounded by a context);
//     Loop.DialConn(ctx), Go(ctx, ...) and Loop.LookupHost(ctx, ...).
//     ECANCELLED matches context.Canceled and ETIMEDOUT
//     context.DeadlineExceeded under errors.Is.
//   - typed results: TypedFuture[T] and TypedTask[T] carry a Go value of
//     type T or a Go error. The value never crosses into the library: the
//     C future's result word is a key into a Go table, given with the
//     binding's free func, so the entry goes when the library frees the
//     value (the future released and the loop done with it), or when
//     RunTyped hands the value over; see LiveTypedValues. Go runs a func
//     on the library's executor into a TypedFuture; Loop.LookupHost
//     resolves a name on its resolver pool into a
//     TypedFuture[[]netip.Addr].
//   - net.Conn, net.Listener and net.PacketConn: Conn over a stream
//     Transport (DialConn, ListenConn's Accept, or NewConn in a
//     transport's ConnectionMade), with flow control both ways and
//     deadlines; PacketConn over a UDP transport (ListenPacket), with a
//     bounded receive queue. Their state machines are the core's
//     (internal/streamconn, internal/packetconn).
//
// Go programs that load libloop.so carry two Go runtimes in one process (the
// host's and the library's). This works on Linux for the calls made here, but
// keep the worlds apart: only ids, integers and C memory cross the boundary.
package libloop
