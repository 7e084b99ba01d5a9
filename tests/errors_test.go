// SPDX-License-Identifier: MIT

package tests

import (
	"fmt"
	"math"
	"os"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"

	ll "github.com/libloop/libloop/bindings/go"
)

// The headers, read as a C compiler would not: libloop.h's version macros
// and libloop/errno.h's LL_ERRNO_MAP, so that these tests compare the
// library with the headers themselves rather than with a copy of them.
type headerCode struct {
	name, message string
	value         int
}

func readHeader(t *testing.T) (version [3]int, codes []headerCode) {
	t.Helper()
	data, err := os.ReadFile("../include/libloop.h")
	if err != nil {
		t.Fatal(err)
	}
	text := string(data)
	for i, part := range []string{"MAJOR", "MINOR", "PATCH"} {
		m := regexp.MustCompile(`(?m)^#define LL_VERSION_` + part + ` (\d+)$`).FindStringSubmatch(text)
		if m == nil {
			t.Fatalf("no LL_VERSION_%s in the header", part)
		}
		version[i], _ = strconv.Atoi(m[1])
	}
	data, err = os.ReadFile("../include/libloop/errno.h")
	if err != nil {
		t.Fatal(err)
	}
	body := regexp.MustCompile(`(?m)^#define LL_ERRNO_MAP\(XX\)((?:.*\\\n)*.*)$`).FindStringSubmatch(string(data))
	if body == nil {
		t.Fatal("no LL_ERRNO_MAP in include/libloop/errno.h")
	}
	entry := regexp.MustCompile(`XX\((\w+), (-\d+), ((?:"[^"]*"\s*(?:\\\n\s*)?)+)\)`)
	for _, m := range entry.FindAllStringSubmatch(body[1], -1) {
		value, _ := strconv.Atoi(m[2])
		var msg strings.Builder
		for _, lit := range regexp.MustCompile(`"([^"]*)"`).FindAllStringSubmatch(m[3], -1) {
			msg.WriteString(lit[1])
		}
		codes = append(codes, headerCode{"LL_" + m[1], msg.String(), value})
	}
	if len(codes) < 20 || len(codes) != strings.Count(body[1], "XX(") {
		t.Fatalf("read %d codes of LL_ERRNO_MAP's %d entries", len(codes), strings.Count(body[1], "XX("))
	}
	return version, codes
}

func TestVersionMatchesHeader(t *testing.T) {
	hv, _ := readHeader(t)
	want := hv[0]*10000 + hv[1]*100 + hv[2]
	v := int(raw.Version())
	if v != want || ll.HeaderVersion != want {
		t.Fatalf("ll_version() = %d, binding's HeaderVersion %d, want the header's LL_VERSION %d", v, ll.HeaderVersion, want)
	}
	s := lib.VersionString()
	if s != fmt.Sprintf("%d.%d.%d", hv[0], hv[1], hv[2]) {
		t.Fatalf("ll_version_string() = %q, want %d.%d.%d", s, hv[0], hv[1], hv[2])
	}
	if ll.Version() != v || ll.VersionString() != s {
		t.Fatal("package-level Version/VersionString disagree with the library")
	}
}

// ll_err_name and ll_strerror give each code of the header's map its name
// and message (the bindings' constants: tests/check_abi.py).
func TestErrNamesAndMessagesMatchHeader(t *testing.T) {
	_, codes := readHeader(t)
	for _, c := range codes {
		if got := lib.ErrName(c.value); got != c.name {
			t.Errorf("ll_err_name(%d) = %q, the header's map has %q", c.value, got, c.name)
		}
		if got := lib.StrError(c.value); got != c.message {
			t.Errorf("ll_strerror(%d) = %q, the header's map has %q", c.value, got, c.message)
		}
		if e := ll.Error(c.value); e.Name() != c.name || e.Message() != c.message {
			t.Errorf("ll.Error(%d) is %q %q, the header's map has %q %q", c.value, e.Name(), e.Message(), c.name, c.message)
		}
	}
}

func TestErrNameAndStrError(t *testing.T) {
	_, codes := readHeader(t)
	msgs := map[string]int{}
	for _, c := range codes {
		msg := lib.StrError(c.value)
		if msg == "" {
			t.Errorf("ll_strerror(%d) is empty", c.value)
		}
		if prev, dup := msgs[msg]; dup {
			t.Errorf("ll_strerror(%d) and ll_strerror(%d) are both %q", c.value, prev, msg)
		}
		msgs[msg] = c.value
	}
	if !strings.Contains(lib.StrError(cECLOSED), "closed") {
		t.Errorf("ll_strerror(LL_ECLOSED) = %q", lib.StrError(cECLOSED))
	}
	for code, name := range map[int]string{eBADF: "EBADF", ePERM: "EPERM", -11: "EAGAIN"} {
		if got := lib.ErrName(code); got != name {
			t.Errorf("ll_err_name(%d) = %q, want %q", code, got, name)
		}
	}
	if got := lib.StrError(eBADF); !strings.Contains(strings.ToLower(got), "bad file") {
		t.Errorf("ll_strerror(-EBADF) = %q", got)
	}
	for _, code := range []int{-10021, -10999, -20000, math.MinInt32} {
		if got := lib.ErrName(code); got != "UNKNOWN" {
			t.Errorf("ll_err_name(%d) = %q, want UNKNOWN", code, got)
		}
	}
}

// Neither function ever returns NULL or an empty string, for any int.
func TestStringsNeverNull(t *testing.T) {
	codes := []int32{0, 1, 2, 100, 10000, math.MaxInt32, -1, -9, -133, -4094, -4095, -4096,
		-9999, -10011, -10100, -20000, -65536, math.MinInt32, math.MinInt32 + 1}
	for c := int32(-10000); c >= -10010; c-- {
		codes = append(codes, c)
	}
	for c := int32(-1); c >= -200; c-- {
		codes = append(codes, c)
	}
	for _, c := range codes {
		if p := raw.StrError(c); p == nil || ll.GoString(p) == "" {
			t.Errorf("ll_strerror(%d) returned NULL or \"\"", c)
		}
		if p := raw.ErrName(c); p == nil || ll.GoString(p) == "" {
			t.Errorf("ll_err_name(%d) returned NULL or \"\"", c)
		}
	}
}

// The string functions are thread-safe and return stable storage.
func TestStringsFromManyThreads(t *testing.T) {
	want := map[int32]string{}
	for c := int32(-10009); c <= -10000; c++ {
		want[c] = lib.StrError(int(c))
	}
	var wg sync.WaitGroup
	for g := 0; g < 8; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < 200; i++ {
				for c, w := range want {
					if got := lib.StrError(int(c)); got != w {
						t.Errorf("ll_strerror(%d) = %q then %q", c, w, got)
						return
					}
					if p := raw.ErrName(c - int32(i)); p == nil {
						t.Errorf("ll_err_name(%d) = NULL", c-int32(i))
						return
					}
				}
			}
		}()
	}
	wg.Wait()
}
