// SPDX-License-Identifier: MIT

package libloop

import "unsafe"

// ErrorContext is what the loop reports to its exception handler
// (ll_error_context; asyncio's context dict).
type ErrorContext struct {
	Loop    uint64 // the loop's id
	Message string // what happened
	Code    int    // the error code concerned, or 0
	Future  uint64 // the future concerned, or 0
	Task    uint64 // the task concerned, or 0
	Handle  uint64 // the handle concerned, or 0
}

// Err returns Code as an Error, or nil when Code is 0.
func (c ErrorContext) Err() error {
	if c.Code == 0 {
		return nil
	}
	return Error(c.Code)
}

// cErrorContext mirrors ll_error_context: a pointer, an int and its padding,
// then three 64-bit ids (40 bytes on LP64).
type cErrorContext struct {
	message unsafe.Pointer
	code    int32
	_       int32
	future  uint64
	task    uint64
	handle  uint64
}

// readErrorContext copies the C context, valid only during the handler call.
func readErrorContext(p unsafe.Pointer) ErrorContext {
	if p == nil {
		return ErrorContext{}
	}
	c := (*cErrorContext)(p)
	return ErrorContext{
		Message: goString(c.message),
		Code:    int(c.code),
		Future:  c.future,
		Task:    c.task,
		Handle:  c.handle,
	}
}

// SetExceptionHandler installs fn as the loop's exception handler; nil
// restores the library's default (one line to stderr). fn runs on the loop
// thread. It also receives panics recovered from the loop's callbacks.
func (l *Loop) SetExceptionHandler(fn func(ErrorContext)) error {
	var key, cb uintptr
	if fn != nil {
		key = addEntry(&cbEntry{kind: kindException, owner: l.id,
			exc: func(_ uint64, ctx ErrorContext) { fn(ctx) }})
		cb = ExceptionHandlerPtr()
	}
	if err := check(l.raw().SetExceptionHandler(l.id, cb, key)); err != nil {
		if key != 0 {
			removeEntry(key)
		}
		return err
	}
	l.mu.Lock()
	old := l.excKey
	l.excKey, l.excFn = key, fn
	l.mu.Unlock()
	if old != 0 {
		removeEntry(old)
	}
	return nil
}

func (l *Loop) goHandler() func(ErrorContext) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.excFn
}
