// SPDX-License-Identifier: MIT

package main

import (
	"bytes"
	"math"
	"os"
	"testing"
	"unsafe"

	"github.com/libloop/libloop/libloop"
	"golang.org/x/sys/unix"
)

// Fuzz targets for what the C ABI decodes from a host: C string arrays
// (argv, env), process options, write-buffer limits, timer delays, forged
// ids, and error codes. (The id table itself: FuzzIDTable in ids_test.go;
// sockaddr bytes and host strings: libloop/sockaddr_fuzz_test.go.)

// cArray lays out strs as a NULL-terminated array of C strings in Go memory
// (the exports, called from Go, read it as C would).
func cArray(strs []string) []*_Ctype_ll__cchar {
	arr := make([]*_Ctype_ll__cchar, 0, len(strs)+1)
	for _, s := range strs {
		arr = append(arr, cstr(s))
	}
	return append(arr, nil)
}

// cStrings gives back exactly the strings of a terminated array (each up to
// its first NUL), and refuses an array with no terminator within its bound.
func FuzzCStrings(f *testing.F) {
	f.Add([]byte("sh\n-c\necho hi"))
	f.Add([]byte(""))
	f.Add([]byte("a\x00b\n\n\xff\xfe"))
	f.Fuzz(func(t *testing.T, data []byte) {
		var strs []string
		if len(data) > 0 {
			for _, p := range bytes.Split(data, []byte("\n")) {
				strs = append(strs, string(p))
			}
		}
		arr := cArray(strs)
		got, ok := cStrings(&arr[0])
		if !ok || len(got) != len(strs) {
			t.Fatalf("cStrings(%q) = %q, %v", strs, got, ok)
		}
		for i, s := range strs {
			want, _, _ := bytes.Cut([]byte(s), []byte{0})
			if got[i] != string(want) {
				t.Fatalf("entry %d: %q, want %q", i, got[i], want)
			}
		}
	})
}

func TestCStringsUnterminatedIsRefused(t *testing.T) {
	one := cstr("x")
	arr := make([]*_Ctype_ll__cchar, maxCStrings+2)
	for i := range arr[:maxCStrings+1] {
		arr[i] = one
	}
	if _, ok := cStrings(&arr[0]); ok {
		t.Fatal("an array past the bound with no terminator was accepted")
	}
	arr[maxCStrings] = nil
	if got, ok := cStrings(&arr[0]); !ok || len(got) != maxCStrings {
		t.Fatalf("%d strings: %d, %v", maxCStrings, len(got), ok)
	}
}

// spawnFuzzLoop is a loop for the spawn fuzz targets, released at the end,
// whose /dev/null (opened at the first spawn that wants it and kept until
// the loop closes) is already open, so fd counts compare.
func spawnFuzzLoop(f *testing.F) cid {
	var loop cid
	if rc := ll__loop_new(&loop); rc != 0 {
		f.Fatal(rc)
	}
	f.Cleanup(func() { ll__release_go(loop, 1) })
	argv := cArray([]string{"x"})
	var o _Ctype_ll_process_options
	o.file = cstr("/nonexistent-dir/x")
	o.argv = (**_Ctype_char)(unsafe.Pointer(&argv[0]))
	o.stdio = [3]_Ctype_int{-3, -3, -3}
	var p cid
	ll_spawn(loop, (*_Ctype_ll__cprocess_options)(unsafe.Pointer(&o)), nil, nil, &p)
	return loop
}

// fdCount is the number of open fds of the process.
func fdCount(t *testing.T) int {
	ents, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Skip("no /proc/self/fd")
	}
	return len(ents)
}

// Any stdio values, flags and argv with a program that does not exist: the
// call is refused (never 0: no child), and whatever it opened on the way
// (pipes, /dev/null) is closed again.
func FuzzSpawnOptions(f *testing.F) {
	f.Add(int32(-2), int32(-2), int32(-4), int32(0), []byte("prog\narg"), false)
	f.Add(int32(-1), int32(-3), int32(-2), int32(3), []byte(""), true)
	f.Add(int32(0), int32(1), int32(2), int32(-1), []byte("x"), false)
	f.Add(int32(9999), int32(-5), int32(1<<30), int32(1), []byte("a\nb\nc"), false)
	loop := spawnFuzzLoop(f)
	f.Fuzz(func(t *testing.T, in, out, errfd, flags int32, argvData []byte, nullEnv bool) {
		before := fdCount(t)
		var argv []string
		if len(argvData) > 0 {
			for _, p := range bytes.Split(argvData, []byte("\n")) {
				argv = append(argv, string(p))
			}
		}
		cargv := cArray(argv)
		cenv := cArray([]string{"PATH=/nonexistent-dir"})
		var o _Ctype_ll_process_options
		o.file = cstr("/nonexistent-dir/no-such-program")
		o.argv = (**_Ctype_char)(unsafe.Pointer(&cargv[0]))
		if !nullEnv {
			o.env = (**_Ctype_char)(unsafe.Pointer(&cenv[0]))
		}
		o.stdio = [3]_Ctype_int{_Ctype_int(in), _Ctype_int(out), _Ctype_int(errfd)}
		o.flags = _Ctype_int(flags)
		var p cid = 77
		rc := ll_spawn(loop, (*_Ctype_ll__cprocess_options)(unsafe.Pointer(&o)), nil, nil, &p)
		if rc >= 0 || p != 77 {
			t.Fatalf("ll_spawn of a missing program: rc %d, id %d", rc, p)
		}
		if len(argv) > 0 && flags&^3 == 0 && plainStdio(in) && plainStdio(out) && (plainStdio(errfd) || errfd == -4) &&
			rc != -_Ctype_int(unix.ENOENT) {
			t.Fatalf("valid options, missing program: rc %d, want -ENOENT", rc)
		}
		if after := fdCount(t); after != before {
			ents, _ := os.ReadDir("/proc/self/fd")
			var names []string
			for _, e := range ents {
				l, _ := os.Readlink("/proc/self/fd/" + e.Name())
				names = append(names, e.Name()+"->"+l)
			}
			t.Fatalf("a refused ll_spawn changed the fd count %d -> %d: %v", before, after, names)
		}
	})
}

// plainStdio: LL_STDIO_INHERIT, _PIPE, _DEVNULL, or fds 0..2 (open here).
func plainStdio(v int32) bool { return v >= -3 && v <= 2 }

// Write-buffer limits: refused (and nothing changed) exactly when low >
// high or either is over 2^62; else the transport keeps them.
func FuzzWriteBufferLimits(f *testing.F) {
	f.Add(uint64(0), uint64(0))
	f.Add(uint64(1<<62), uint64(1<<62))
	f.Add(uint64(1<<62+1), uint64(0))
	f.Add(uint64(10), uint64(20))
	f.Add(uint64(math.MaxUint64), uint64(math.MaxUint64))
	var loop cid
	if rc := ll__loop_new(&loop); rc != 0 {
		f.Fatal(rc)
	}
	f.Cleanup(func() { ll__release_go(loop, 1) })
	fds, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_STREAM, 0)
	if err != nil {
		f.Fatal(err)
	}
	f.Cleanup(func() { unix.Close(fds[1]) })
	var tr cid
	if rc := ll_transport_open(loop, _Ctype_int(fds[0]), 1, nil, nil, &tr); rc != 0 {
		f.Fatal(rc)
	}
	f.Fuzz(func(t *testing.T, high, low uint64) {
		rc := ll_transport_set_write_buffer_limits(tr, _Ctype_size_t(high), _Ctype_size_t(low))
		bad := high > 1<<62 || low > 1<<62 || low > high
		if bad != (rc == _Ctype_int(libloop.EINVAL)) || (!bad && rc != 0) {
			t.Fatalf("limits (%d, %d): rc %d", high, low, rc)
		}
		var size _Ctype_size_t = 99
		if rc := ll_transport_get_write_buffer_size(tr, &size); rc != 0 || size != 0 {
			t.Fatalf("buffer size %d (rc %d) after setting limits", size, rc)
		}
	})
}

// A timer delay is accepted unless NaN, +Inf or past ~100 years; an
// accepted timer's deadline is never earlier than asked (-Inf stays -Inf).
func FuzzCallLaterDelay(f *testing.F) {
	for _, d := range []float64{0, -1, 1e-9, 3600, 3.2e9, 3.3e9, math.Inf(1), math.Inf(-1), math.NaN(), -1e300, 1e300,
		math.SmallestNonzeroFloat64, math.MaxFloat64} {
		f.Add(d)
	}
	var loop cid
	if rc := ll__loop_new(&loop); rc != 0 {
		f.Fatal(rc)
	}
	f.Cleanup(func() { ll__release_go(loop, 1) })
	const century = 100 * 365.25 * 86400
	f.Fuzz(func(t *testing.T, delay float64) {
		var h cid
		before := float64(ll_loop_time(loop))
		rc := ll__call_later_go(0, loop, _Ctype_double(delay), trapFn(), nil, &h)
		switch {
		case math.IsNaN(delay) || math.IsInf(delay, 1) || delay > century*1.01:
			if rc != _Ctype_int(libloop.EINVAL) {
				t.Fatalf("delay %v: rc %d, want LL_EINVAL", delay, rc)
			}
			return
		case delay < century*0.99:
			if rc != 0 {
				t.Fatalf("delay %v: rc %d", delay, rc)
			}
		default: // around the limit: either answer, but a clear one
			if rc != 0 && rc != _Ctype_int(libloop.EINVAL) {
				t.Fatalf("delay %v: rc %d", delay, rc)
			}
			if rc != 0 {
				return
			}
		}
		when := float64(ll_timer_when(h))
		if math.IsInf(delay, -1) != math.IsInf(when, -1) || (delay > 0 && when < before+delay-1e-6) {
			t.Fatalf("delay %v: deadline %v (loop time %v)", delay, when, before)
		}
		ll__handle_cancel_go(0, h)
		ll__release_go(h, 1)
	})
}

// An id that names nothing live is LL_EBADHANDLE everywhere, whatever its
// bits (kind, slot, generation).
func FuzzForgedIDs(f *testing.F) {
	f.Add(uint64(0))
	f.Add(uint64(1))
	f.Add(uint64(1<<24 | 1))
	f.Add(uint64(math.MaxUint64))
	f.Fuzz(func(t *testing.T, raw uint64) {
		id := cid(raw)
		if ids.kindOf(raw) != 0 {
			return // happens to be live: not a forged id
		}
		bad := _Ctype_int(libloop.EBADHANDLE)
		var out cid
		var v _Ctype_uintptr_t
		for name, rc := range map[string]_Ctype_int{
			"ll_future_state":    ll_future_state(id),
			"ll_future_result":   ll_future_result(id, &v),
			"ll_handle_cancel":   ll__handle_cancel_go(0, id),
			"ll_loop_is_running": ll_loop_is_running(id),
			"ll_future_new":      ll_future_new(id, &out),
			"ll_task_cancel":     ll_task_cancel(id, nil),
			"ll_transport_close": ll_transport_close(id),
			"ll_server_close":    ll_server_close(id),
			"ll_process_kill":    ll_process_kill(id),
			"ll_release":         ll__release_go(id, 1),
		} {
			if rc != bad {
				t.Fatalf("%s(%#x) = %d, want LL_EBADHANDLE", name, raw, rc)
			}
		}
	})
}

// Every int has a name and a message; the process-lifetime cache of their C
// copies stays bounded (the names, plus one message per errno below 4096).
func FuzzErrorStrings(f *testing.F) {
	for _, c := range []int32{0, -1, -4095, -4096, -10000, -10010, -10011, math.MinInt32, math.MaxInt32} {
		f.Add(c)
	}
	f.Fuzz(func(t *testing.T, code int32) {
		for _, p := range []*_Ctype_char{ll__strerror(_Ctype_int(code)), ll__err_name(_Ctype_int(code))} {
			if p == nil || *(*byte)(unsafe.Pointer(p)) == 0 {
				t.Fatalf("code %d: empty string", code)
			}
		}
		n := 0
		cstrings.Range(func(any, any) bool { n++; return true })
		if n > 2*4096+64 {
			t.Fatalf("%d cached C strings", n)
		}
	})
}
