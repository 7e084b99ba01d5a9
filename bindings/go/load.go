// SPDX-License-Identifier: MIT

package libloop

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/ebitengine/purego"
)

// EnvLibrary names the environment variable that gives libloop.so's path.
const EnvLibrary = "LIBLOOP_LIBRARY"

// Lib is the loaded libloop.so. There is one per process (see Open).
type Lib struct {
	// Path is the path the library was loaded from.
	Path string
	// Raw calls the library's ll_ functions directly.
	Raw *Raw
}

// LoadError reports that libloop.so could not be loaded from any candidate.
type LoadError struct {
	Tried []string // the paths tried, in order
	Errs  []error  // why each failed
}

// Error names every path tried and why it failed.
func (e *LoadError) Error() string {
	var b strings.Builder
	b.WriteString("libloop: cannot load libloop.so; tried ")
	for i, p := range e.Tried {
		if i > 0 {
			b.WriteString("; ")
		}
		fmt.Fprintf(&b, "%q: %v", p, e.Errs[i])
	}
	b.WriteString(" (set " + EnvLibrary + " to the library's path, or run `make lib`)")
	return b.String()
}

var (
	openOnce  sync.Once
	openLib   *Lib
	openErr   error
	loadedLib atomic.Pointer[Lib]
)

// Open loads libloop.so once per process and returns it; later calls return
// the same Lib (or the same error).
func Open() (*Lib, error) {
	openOnce.Do(func() {
		openLib, openErr = load(candidatePaths())
		if openErr == nil {
			loadedLib.Store(openLib)
		}
	})
	return openLib, openErr
}

// MustOpen is Open that panics with the load error.
func MustOpen() *Lib {
	lib, err := Open()
	if err != nil {
		panic(err)
	}
	return lib
}

// candidatePaths lists where to look: $LIBLOOP_LIBRARY alone when set, else
// <repo>/build/libloop.so found from this source file, then "libloop.so".
func candidatePaths() []string {
	if p := os.Getenv(EnvLibrary); p != "" {
		return []string{p}
	}
	var paths []string
	if _, file, _, ok := runtime.Caller(0); ok {
		paths = append(paths, filepath.Join(filepath.Dir(file), "..", "..", "build", "libloop.so"))
	}
	return append(paths, "libloop.so")
}

// load dlopens the first loadable path and binds every symbol.
func load(paths []string) (*Lib, error) {
	le := &LoadError{}
	for _, p := range paths {
		if strings.ContainsRune(p, os.PathSeparator) {
			if _, err := os.Stat(p); err != nil {
				le.Tried, le.Errs = append(le.Tried, p), append(le.Errs, err)
				continue
			}
		}
		h, err := purego.Dlopen(p, purego.RTLD_NOW|purego.RTLD_LOCAL)
		if err != nil {
			le.Tried, le.Errs = append(le.Tried, p), append(le.Errs, err)
			continue
		}
		raw, err := bindRaw(h, p)
		if err != nil {
			return nil, err
		}
		if err := loadLibc(); err != nil {
			return nil, err
		}
		return &Lib{Path: p, Raw: raw}, nil
	}
	if len(le.Tried) == 0 {
		return nil, errors.New("libloop: no library path to try")
	}
	return nil, le
}

// Version returns ll_version(): MAJOR*10000 + MINOR*100 + PATCH.
func (lib *Lib) Version() int { return int(lib.Raw.Version()) }

// VersionString returns ll_version_string(), e.g. "0.1.0".
func (lib *Lib) VersionString() string { return goString(lib.Raw.VersionString()) }

// StrError returns ll_strerror(code).
func (lib *Lib) StrError(code int) string { return goString(lib.Raw.StrError(int32(code))) }

// ErrName returns ll_err_name(code).
func (lib *Lib) ErrName(code int) string { return goString(lib.Raw.ErrName(int32(code))) }

// Version returns the loaded library's ll_version(); it panics if the
// library cannot be loaded (see Open).
func Version() int { return MustOpen().Version() }

// VersionString returns the loaded library's ll_version_string(); it panics
// if the library cannot be loaded.
func VersionString() string { return MustOpen().VersionString() }

// StrError returns ll_strerror(code); it panics if the library cannot be loaded.
func StrError(code int) string { return MustOpen().StrError(code) }

// ErrName returns ll_err_name(code); it panics if the library cannot be loaded.
func ErrName(code int) string { return MustOpen().ErrName(code) }
