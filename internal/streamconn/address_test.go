// SPDX-License-Identifier: MIT

package streamconn

import (
	"errors"
	"net"
	"testing"
)

// SplitAddress takes tcp host:port and unix paths, refusing other
// networks and malformed addresses as net does.
func TestSplitAddress(t *testing.T) {
	if h, p, err := SplitAddress("dial", "tcp", "127.0.0.1:8080"); h != "127.0.0.1" || p != 8080 || err != nil {
		t.Fatalf("tcp: %q %d %v", h, p, err)
	}
	if h, p, err := SplitAddress("dial", "unix", "/tmp/x"); h != "" || p != 0 || err != nil {
		t.Fatalf("unix: %q %d %v", h, p, err)
	}
	var une net.UnknownNetworkError
	if _, _, err := SplitAddress("listen", "udp", "x:1"); !errors.As(err, &une) {
		t.Fatalf("udp: %v, want an unknown network", err)
	}
	var oe *net.OpError
	if _, _, err := SplitAddress("dial", "tcp", "no-port"); !errors.As(err, &oe) || oe.Op != "dial" {
		t.Fatalf("no port: %v", err)
	}
}
