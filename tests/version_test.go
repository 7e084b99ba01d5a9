// SPDX-License-Identifier: MIT

package tests

import (
	"fmt"
	"math"
	"strings"
	"sync"
	"testing"

	ll "github.com/libloop/libloop/bindings/go"
)

func TestVersionMatchesHeader(t *testing.T) {
	v := int(raw.Version())
	if v != 100 || ll.HeaderVersion != 100 {
		t.Fatalf("ll_version() = %d, want LL_VERSION 100 (0.1.0)", v)
	}
	s := lib.VersionString()
	if s != "0.1.0" || s != fmt.Sprintf("%d.%d.%d", v/10000, v/100%100, v%100) {
		t.Fatalf("ll_version_string() = %q, want 0.1.0", s)
	}
	if ll.Version() != v || ll.VersionString() != s {
		t.Fatal("package-level Version/VersionString disagree with the library")
	}
}

var headerNames = map[int]string{
	cEINVAL: "LL_EINVAL", cEBADHANDLE: "LL_EBADHANDLE", cECLOSED: "LL_ECLOSED",
	cERUNNING: "LL_ERUNNING", cESTATE: "LL_ESTATE", cECANCELLED: "LL_ECANCELLED",
	cEWRONGTHREAD: "LL_EWRONGTHREAD", cESTOPPED: "LL_ESTOPPED",
	cETIMEDOUT: "LL_ETIMEDOUT", cENOMEM: "LL_ENOMEM", cENONAME: "LL_ENONAME",
	// include/libloop.h's TLS codes
	-10011: "LL_ETLS", -10012: "LL_ETLSCERT", -10013: "LL_ETLSHOST", -10014: "LL_ETLSNOCERT",
	-10015: "LL_ETLSALERT", -10016: "LL_ETLSNEGOTIATE", -10017: "LL_ETLSPROTO", -10018: "LL_ETLSEOF",
	-10019: "LL_EFORKED",
}

func TestErrorConstantsMatchHeader(t *testing.T) {
	consts := map[ll.Error]int{
		ll.EINVAL: cEINVAL, ll.EBADHANDLE: cEBADHANDLE, ll.ECLOSED: cECLOSED,
		ll.ERUNNING: cERUNNING, ll.ESTATE: cESTATE, ll.ECANCELLED: cECANCELLED,
		ll.EWRONGTHREAD: cEWRONGTHREAD, ll.ESTOPPED: cESTOPPED,
		ll.ETIMEDOUT: cETIMEDOUT, ll.ENOMEM: cENOMEM, ll.ENONAME: cENONAME,
		ll.ETLS: -10011, ll.ETLSCERT: -10012, ll.ETLSHOST: -10013, ll.ETLSNOCERT: -10014,
		ll.ETLSALERT: -10015, ll.ETLSNEGOTIATE: -10016, ll.ETLSPROTO: -10017, ll.ETLSEOF: -10018,
		ll.EFORKED: -10019,
	}
	if len(consts) != 20 {
		t.Fatalf("binding constants collide: %v", consts)
	}
	for e, code := range consts {
		if e.Code() != code || e.Name() != headerNames[code] {
			t.Errorf("binding constant %d named %q, header has %d %q", e.Code(), e.Name(), code, headerNames[code])
		}
	}
}

func TestErrNameAndStrError(t *testing.T) {
	msgs := map[string]int{}
	for code, name := range headerNames {
		if got := lib.ErrName(code); got != name {
			t.Errorf("ll_err_name(%d) = %q, want %q", code, got, name)
		}
		msg := lib.StrError(code)
		if msg == "" {
			t.Errorf("ll_strerror(%d) is empty", code)
		}
		if prev, dup := msgs[msg]; dup {
			t.Errorf("ll_strerror(%d) and ll_strerror(%d) are both %q", code, prev, msg)
		}
		msgs[msg] = code
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
	for _, code := range []int{-10020, -10999, -20000, math.MinInt32} {
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
