// SPDX-License-Identifier: MIT

package libloop

import (
	"strings"
	"testing"
)

// A Unix socket path longer than sun_path is refused at once with EINVAL
// (LL_EINVAL), by ListenUnix and DialUnix alike, without a socket left open.
func TestUnixPathTooLong(t *testing.T) {
	l := newTestLoop(t)
	before := openFDs(t)
	long := "/" + strings.Repeat("a", 200)
	if _, err := l.ListenUnix(long, 0, nil); err != EINVAL {
		t.Fatalf("ListenUnix: %v, want EINVAL", err)
	}
	if _, err := l.ListenUnix("@"+strings.Repeat("b", 200), 0, nil); err != EINVAL {
		t.Fatalf("ListenUnix abstract: %v, want EINVAL", err)
	}
	called := false
	if err := l.DialUnix(long, nil, func(*Transport, error) { called = true }); err != EINVAL {
		t.Fatalf("DialUnix: %v, want EINVAL", err)
	}
	l.RunOnce(true)
	if called {
		t.Fatal("a refused dial reported an outcome")
	}
	if after := openFDs(t); after != before {
		t.Fatalf("fds: %d before, %d after", before, after)
	}
}
