// SPDX-License-Identifier: MIT

package libloop

import (
	"fmt"
	"os"
)

// ErrorContext describes an error the loop reports, asyncio's
// call_exception_handler context: a message, an error code, and the object
// concerned (whichever applies).
type ErrorContext struct {
	Message string
	Code    int
	Handle  *Handle
	Future  *Future
}

// SetExceptionHandler installs fn as the loop's exception handler; nil
// restores the default, which writes one line to stderr.
func (l *Loop) SetExceptionHandler(fn func(*ErrorContext)) { l.excHandler = fn }

// CallExceptionHandler reports ctx to the installed handler, or the default.
func (l *Loop) CallExceptionHandler(ctx *ErrorContext) {
	if l.excHandler != nil {
		l.excHandler(ctx)
		return
	}
	DefaultExceptionHandler(ctx)
}

// DefaultExceptionHandler writes ctx as one line to stderr.
func DefaultExceptionHandler(ctx *ErrorContext) {
	if ctx.Code != 0 {
		fmt.Fprintf(os.Stderr, "libloop: %s (%s: %s)\n", ctx.Message, Errno(ctx.Code).Name(), Errno(ctx.Code).Message())
	} else {
		fmt.Fprintf(os.Stderr, "libloop: %s\n", ctx.Message)
	}
}
