// SPDX-License-Identifier: MIT

package main

/*
#include "capi.h"
*/
import "C"

import (
	"unsafe"

	"github.com/libloop/libloop/libloop"
)

// The structs C reads in Go's layout, checked when capi compiles: each
// array below has a negative or overflowing length, a compile error, when
// C's declaration (cloop/cloop.h) and Go's disagree.

// A chain's view (ll__chain_view, libloop.ChainView): version, size and
// every offset.
var (
	_ [C.LL__CHAIN_VIEW_VERSION - libloop.ChainViewVersion]struct{}
	_ [libloop.ChainViewVersion - C.LL__CHAIN_VIEW_VERSION]struct{}

	_ [unsafe.Sizeof(C.ll__chain_view{}) - unsafe.Sizeof(libloop.ChainView{})]struct{}
	_ [unsafe.Sizeof(libloop.ChainView{}) - unsafe.Sizeof(C.ll__chain_view{})]struct{}

	_ [unsafe.Offsetof(C.ll__chain_view{}.version) - unsafe.Offsetof(libloop.ChainView{}.Version)]struct{}
	_ [unsafe.Offsetof(libloop.ChainView{}.Version) - unsafe.Offsetof(C.ll__chain_view{}.version)]struct{}
	_ [unsafe.Offsetof(C.ll__chain_view{}.posted) - unsafe.Offsetof(libloop.ChainView{}.Posted)]struct{}
	_ [unsafe.Offsetof(libloop.ChainView{}.Posted) - unsafe.Offsetof(C.ll__chain_view{}.posted)]struct{}
	_ [unsafe.Offsetof(C.ll__chain_view{}.changes) - unsafe.Offsetof(libloop.ChainView{}.Changes)]struct{}
	_ [unsafe.Offsetof(libloop.ChainView{}.Changes) - unsafe.Offsetof(C.ll__chain_view{}.changes)]struct{}
	_ [unsafe.Offsetof(C.ll__chain_view{}.ready_len) - unsafe.Offsetof(libloop.ChainView{}.ReadyLen)]struct{}
	_ [unsafe.Offsetof(libloop.ChainView{}.ReadyLen) - unsafe.Offsetof(C.ll__chain_view{}.ready_len)]struct{}
)

// A host callback in a batch (ll__call, libloop.HostCall): the Host's
// Buffer is C memory that Go fills as []HostCall, so size and every offset.
var (
	_ [unsafe.Sizeof(C.ll__call{}) - unsafe.Sizeof(libloop.HostCall{})]struct{}
	_ [unsafe.Sizeof(libloop.HostCall{}) - unsafe.Sizeof(C.ll__call{})]struct{}

	_ [unsafe.Offsetof(C.ll__call{}.fn) - unsafe.Offsetof(libloop.HostCall{}.Fn)]struct{}
	_ [unsafe.Offsetof(libloop.HostCall{}.Fn) - unsafe.Offsetof(C.ll__call{}.fn)]struct{}
	_ [unsafe.Offsetof(C.ll__call{}.arg) - unsafe.Offsetof(libloop.HostCall{}.Arg)]struct{}
	_ [unsafe.Offsetof(libloop.HostCall{}.Arg) - unsafe.Offsetof(C.ll__call{}.arg)]struct{}
	_ [unsafe.Offsetof(C.ll__call{}.id) - unsafe.Offsetof(libloop.HostCall{}.ID)]struct{}
	_ [unsafe.Offsetof(libloop.HostCall{}.ID) - unsafe.Offsetof(C.ll__call{}.id)]struct{}
	_ [unsafe.Offsetof(C.ll__call{}.fd) - unsafe.Offsetof(libloop.HostCall{}.FD)]struct{}
	_ [unsafe.Offsetof(libloop.HostCall{}.FD) - unsafe.Offsetof(C.ll__call{}.fd)]struct{}
	_ [unsafe.Offsetof(C.ll__call{}.kind) - unsafe.Offsetof(libloop.HostCall{}.Kind)]struct{}
	_ [unsafe.Offsetof(libloop.HostCall{}.Kind) - unsafe.Offsetof(C.ll__call{}.kind)]struct{}
)

// A C-side timer (ll__later, libloop.HostTimer): flushPending hands the
// record's array to CallAtHostMany in place, so size and every offset.
var (
	_ [unsafe.Sizeof(C.ll__later{}) - unsafe.Sizeof(libloop.HostTimer{})]struct{}
	_ [unsafe.Sizeof(libloop.HostTimer{}) - unsafe.Sizeof(C.ll__later{})]struct{}

	_ [unsafe.Offsetof(C.ll__later{}.when) - unsafe.Offsetof(libloop.HostTimer{}.When)]struct{}
	_ [unsafe.Offsetof(libloop.HostTimer{}.When) - unsafe.Offsetof(C.ll__later{}.when)]struct{}
	_ [unsafe.Offsetof(C.ll__later{}.fn) - unsafe.Offsetof(libloop.HostTimer{}.Fn)]struct{}
	_ [unsafe.Offsetof(libloop.HostTimer{}.Fn) - unsafe.Offsetof(C.ll__later{}.fn)]struct{}
	_ [unsafe.Offsetof(C.ll__later{}.arg) - unsafe.Offsetof(libloop.HostTimer{}.Arg)]struct{}
	_ [unsafe.Offsetof(libloop.HostTimer{}.Arg) - unsafe.Offsetof(C.ll__later{}.arg)]struct{}
)
