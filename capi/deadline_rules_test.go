// SPDX-License-Identifier: MIT

package main

import (
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/libloop/libloop/internal/timers"
)

// C's fast paths (ll_call_later, ll_call_at) schedule the delays they take
// themselves, so they keep a copy of two deadline rules: the largest delay
// (MAX_DELAY) and the rounding of seconds up to nanoseconds. Both must be
// internal/timers' (MaxDelay, NsPerSecond), else C would take a delay Go
// refuses or round it otherwise. The C file is found wherever it lives
// under capi/, and its values are read from the source (a macro in a .c
// file is out of cgo's sight).
func TestCDeadlineRulesAreGos(t *testing.T) {
	path, src := cSourceDefining(t, "MAX_DELAY")
	m := regexp.MustCompile(`(?m)^#define MAX_DELAY (.+)$`).FindStringSubmatch(src)
	if got := product(t, m[1]); got != timers.MaxDelay {
		t.Errorf("%s: MAX_DELAY = %s = %g, internal/timers.MaxDelay = %g", path, m[1], got, timers.MaxDelay)
	}
	// Every product rounded up is seconds times the factor: "ceil(x * f)".
	conv := regexp.MustCompile(`ceil\(([^()\n]*\*[^()\n]*)\)`).FindAllStringSubmatch(src, -1)
	if len(conv) < 2 {
		t.Fatalf("%s: %d conversions ceil(x * factor); ll_call_later's and ll_call_at's fast paths changed shape", path, len(conv))
	}
	shape := regexp.MustCompile(`^\w+ \* ([0-9.e+]+)$`)
	for _, c := range conv {
		m := shape.FindStringSubmatch(c[1])
		if m == nil {
			t.Errorf("%s: ceil(%s) is not seconds times a factor", path, c[1])
			continue
		}
		if f, err := strconv.ParseFloat(m[1], 64); err != nil || f != timers.NsPerSecond {
			t.Errorf("%s: seconds converted with factor %s, internal/timers.NsPerSecond = %g", path, m[1], timers.NsPerSecond)
		}
	}
}

// cSourceDefining returns the one C file under capi/ that #defines name.
func cSourceDefining(t *testing.T, name string) (string, string) {
	t.Helper()
	var path, src string
	err := filepath.WalkDir(".", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(p, ".c") && !strings.HasSuffix(p, ".h") {
			return err
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		if regexp.MustCompile(`(?m)^#define ` + name + ` `).Match(b) {
			if path != "" {
				t.Fatalf("%s is defined in %s and %s", name, path, p)
			}
			path, src = p, string(b)
		}
		return nil
	})
	if err != nil || path == "" {
		t.Fatalf("no C file under capi/ defines %s (%v)", name, err)
	}
	return path, src
}

// product evaluates a C constant expression of numbers and '*' in
// parentheses, as MAX_DELAY is written.
func product(t *testing.T, expr string) float64 {
	t.Helper()
	v := 1.0
	for _, f := range strings.Split(strings.Trim(strings.TrimSpace(expr), "()"), "*") {
		x, err := strconv.ParseFloat(strings.TrimSpace(f), 64)
		if err != nil {
			t.Fatalf("MAX_DELAY %q: not a product of numbers", expr)
		}
		v *= x
	}
	return v
}
