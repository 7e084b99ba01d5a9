// SPDX-License-Identifier: MIT

// Command tlsload is W11's external TLS client (bench/run_tls.sh), on Go's
// crypto/tls, so every server meets the same client. It refuses any host
// outside 127.0.0.0/8.
//
//	tlsload w11 HOST PORT CA.pem CONNS MSGSIZE TOTAL
//	    CONNS TLS 1.3 connections (handshaken before the clock starts),
//	    each sends MSGSIZE bytes and sends its next message only when the
//	    whole echo is back (checked byte for byte), until TOTAL round trips.
//	    RESULT impl=<TLSLOAD_IMPL> workload=W11 n=.. per_s=.. p50_us=..
//	           p99_us=.. wall_s=.. lg_cpu_s=..
//	tlsload hs HOST PORT CA.pem PARALLEL TOTAL
//	    TOTAL fresh connections, PARALLEL at a time: full TLS 1.3 handshake
//	    (no resumption, X25519), one byte echoed, close.
//	    RESULT impl=.. workload=HS n=.. per_s=<handshakes/s> wall_s=..
//
// Exit status: 0 done, 2 usage or data error, 3 timeout (TLSLOAD_TIMEOUT s,
// default 120).
package main

import (
	"bytes"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"io"
	"net"
	"os"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
)

func die(code int, format string, a ...any) {
	fmt.Fprintf(os.Stderr, "tlsload: "+format+"\n", a...)
	os.Exit(code)
}

func cpuSeconds() float64 {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return float64(ru.Utime.Nano()+ru.Stime.Nano()) / 1e9
}

func main() {
	if len(os.Args) < 7 || len(os.Args) != map[string]int{"w11": 8, "hs": 7}[os.Args[1]] {
		die(2, "usage: tlsload w11 HOST PORT CA CONNS MSGSIZE TOTAL | hs HOST PORT CA PARALLEL TOTAL")
	}
	mode, host, port, caFile := os.Args[1], os.Args[2], os.Args[3], os.Args[4]
	if ip := net.ParseIP(host); ip == nil || !ip.IsLoopback() || ip.To4() == nil {
		die(2, "host %s is not in 127.0.0.0/8", host)
	}
	nums := make([]int, 0, 3)
	for _, a := range os.Args[5:] {
		n, err := strconv.Atoi(a)
		if err != nil || n <= 0 {
			die(2, "bad number %q", a)
		}
		nums = append(nums, n)
	}
	pem, err := os.ReadFile(caFile)
	if err != nil {
		die(2, "%v", err)
	}
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(pem)
	// X25519 only: the OpenSSL 3.0 servers have no post-quantum hybrid,
	// which Go's own server would otherwise pick (costlier), so every
	// server does the same key exchange.
	cfg := &tls.Config{RootCAs: pool, ServerName: "localhost", MinVersion: tls.VersionTLS13,
		CurvePreferences: []tls.CurveID{tls.X25519}}
	impl := os.Getenv("TLSLOAD_IMPL")
	if impl == "" {
		impl = "server"
	}
	limit := 120 * time.Second
	if s, err := strconv.Atoi(os.Getenv("TLSLOAD_TIMEOUT")); err == nil && s > 0 {
		limit = time.Duration(s) * time.Second
	}
	time.AfterFunc(limit, func() { die(3, "timed out after %v", limit) })
	addr := net.JoinHostPort(host, port)
	switch mode {
	case "w11":
		w11(addr, cfg, impl, nums[0], nums[1], nums[2])
	case "hs":
		handshakes(addr, cfg, impl, nums[0], nums[1])
	default:
		die(2, "unknown mode %q", mode)
	}
}

func w11(addr string, cfg *tls.Config, impl string, conns, size, total int) {
	cs := make([]*tls.Conn, conns)
	for i := range cs {
		c, err := tls.Dial("tcp", addr, cfg)
		if err != nil {
			die(2, "connect: %v", err)
		}
		cs[i] = c
	}
	msg := bytes.Repeat([]byte("0123456789abcdef"), size/16+1)[:size]
	var left atomic.Int64
	left.Store(int64(total))
	lat := make([][]time.Duration, conns)
	var wg sync.WaitGroup
	cpu0, t0 := cpuSeconds(), time.Now()
	for i, c := range cs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			buf := make([]byte, size)
			for left.Add(-1) >= 0 {
				s := time.Now()
				if _, err := c.Write(msg); err != nil {
					die(2, "write: %v", err)
				}
				if _, err := io.ReadFull(c, buf); err != nil || !bytes.Equal(buf, msg) {
					die(2, "echo: %v", err)
				}
				lat[i] = append(lat[i], time.Since(s))
			}
		}()
	}
	wg.Wait()
	wall := time.Since(t0).Seconds()
	cpu := cpuSeconds() - cpu0
	for _, c := range cs {
		c.Close()
	}
	all := slices.Concat(lat...)
	slices.Sort(all)
	pct := func(p float64) float64 { return float64(all[int(p*float64(len(all)-1))].Nanoseconds()) / 1e3 }
	fmt.Printf("RESULT impl=%s workload=W11 n=%d per_s=%.0f p50_us=%.1f p99_us=%.1f wall_s=%.3f conns=%d msg=%d lg_cpu_s=%.2f\n",
		impl, total, float64(total)/wall, pct(0.5), pct(0.99), wall, conns, size, cpu)
}

func handshakes(addr string, cfg *tls.Config, impl string, parallel, total int) {
	var left atomic.Int64
	left.Store(int64(total))
	var wg sync.WaitGroup
	t0 := time.Now()
	for range parallel {
		wg.Add(1)
		go func() {
			defer wg.Done()
			b := make([]byte, 1)
			for left.Add(-1) >= 0 {
				c, err := tls.Dial("tcp", addr, cfg) // no session cache: a full handshake each time
				if err != nil {
					die(2, "connect: %v", err)
				}
				if _, err := c.Write([]byte{'x'}); err != nil {
					die(2, "write: %v", err)
				}
				if _, err := io.ReadFull(c, b); err != nil {
					die(2, "echo: %v", err)
				}
				c.Close()
			}
		}()
	}
	wg.Wait()
	wall := time.Since(t0).Seconds()
	fmt.Printf("RESULT impl=%s workload=HS n=%d per_s=%.0f wall_s=%.3f parallel=%d\n", impl, total, float64(total)/wall, wall, parallel)
}
