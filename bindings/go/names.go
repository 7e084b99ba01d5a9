// SPDX-License-Identifier: MIT

package libloop

import (
	"net/netip"
	"runtime"
	"unsafe"
)

// AddrInfo is one entry of a getaddrinfo answer (a struct addrinfo, copied).
type AddrInfo struct {
	Flags     int    // ai_flags
	Family    int    // ai_family: syscall.AF_INET, AF_INET6 ...
	SockType  int    // ai_socktype: syscall.SOCK_STREAM ...
	Protocol  int    // ai_protocol
	Addr      Addr   // ai_addr, decoded
	RawAddr   []byte // ai_addr, as the C library gave it
	CanonName string // ai_canonname ("" unless AI_CANONNAME was asked for)
}

// AddrInfoFuture is the future of GetAddrInfo. Its value (Result) is the C
// struct addrinfo list, which the future owns and frees when it is
// released; Addrs copies it out. Release it when done.
type AddrInfoFuture struct {
	Future
}

// GetAddrInfo resolves host and service with the C library's getaddrinfo
// on the loop's resolver pool, not its executor (asyncio's loop.getaddrinfo); "" passes NULL. family
// (0: AF_UNSPEC), socktype and flags are getaddrinfo's hints. The future
// fails with ENONAME for a name that does not resolve, an errno code, or
// EINVAL for other getaddrinfo errors. EINVAL at once if host and service
// are both "".
func (l *Loop) GetAddrInfo(host, service string, family, socktype, flags int) (*AddrInfoFuture, error) {
	if !fitsInt32(family) || !fitsInt32(socktype) || !fitsInt32(flags) {
		return nil, EINVAL
	}
	h, err := optCString(host)
	if err != nil {
		return nil, err
	}
	defer h.Free()
	s, err := optCString(service)
	if err != nil {
		return nil, err
	}
	defer s.Free()
	id, err := outCall(func(out unsafe.Pointer) int32 {
		return l.raw().GetAddrInfo(l.id, h.ptr(), s.ptr(), int32(family), int32(socktype), int32(flags), out)
	})
	if err != nil {
		return nil, err
	}
	f := &AddrInfoFuture{Future{lib: l.lib, loop: l, id: id, owned: true}}
	ownedFutures.Store(id, &f.Future)
	return f, nil
}

// The struct addrinfo layout: int ai_flags, ai_family, ai_socktype,
// ai_protocol; socklen_t ai_addrlen; then two pointers, ai_addr and
// ai_canonname on glibc/musl, the other way round on the BSDs and macOS;
// then ai_next.
const (
	aiFlags    = 0
	aiFamily   = 4
	aiSockType = 8
	aiProtocol = 12
	aiAddrLen  = 16
	aiFirstPtr = 24
	aiNext     = 40
)

// Addrs returns the resolved entries, in getaddrinfo's order, copied from
// the C list; the error is the future's (ESTATE while pending).
func (f *AddrInfoFuture) Addrs() ([]AddrInfo, error) {
	out, err := getSlot()
	if err != nil {
		return nil, err
	}
	defer putSlot(out)
	if err := check(f.raw().FutureResult(f.id, out)); err != nil {
		return nil, err
	}
	// Read the value as a pointer from the C slot: it is C memory the
	// future owns until it is released.
	return ParseAddrInfo(*(*unsafe.Pointer)(out)), nil
}

// ParseAddrInfo copies a C struct addrinfo list (nil: none).
func ParseAddrInfo(p unsafe.Pointer) []AddrInfo {
	addrOff, nameOff := aiFirstPtr, aiFirstPtr+8
	if runtime.GOOS != "linux" && runtime.GOOS != "android" {
		addrOff, nameOff = nameOff, addrOff
	}
	var out []AddrInfo
	for ; p != nil; p = *(*unsafe.Pointer)(unsafe.Add(p, aiNext)) {
		ai := AddrInfo{
			Flags:    int(*(*int32)(unsafe.Add(p, aiFlags))),
			Family:   int(*(*int32)(unsafe.Add(p, aiFamily))),
			SockType: int(*(*int32)(unsafe.Add(p, aiSockType))),
			Protocol: int(*(*int32)(unsafe.Add(p, aiProtocol))),
		}
		n := *(*uint32)(unsafe.Add(p, aiAddrLen))
		if a := *(*unsafe.Pointer)(unsafe.Add(p, addrOff)); a != nil && n > 0 {
			ai.RawAddr = append([]byte(nil), unsafe.Slice((*byte)(a), n)...)
			ai.Addr = ParseSockaddr(ai.RawAddr)
		}
		ai.CanonName = goString(*(*unsafe.Pointer)(unsafe.Add(p, nameOff)))
		out = append(out, ai)
	}
	return out
}

// NameInfoFuture is the future of GetNameInfo; Names reads its value.
// Release it when done.
type NameInfoFuture struct {
	Future
}

// GetNameInfo finds the host and service names of addr with the C
// library's getnameinfo on the loop's resolver pool (asyncio's
// loop.getnameinfo). flags are getnameinfo's (NI_NUMERICHOST ...). The
// future fails with ENONAME (no name with NI_NAMEREQD), an errno code, or
// EINVAL.
func (l *Loop) GetNameInfo(addr netip.AddrPort, flags int) (*NameInfoFuture, error) {
	if !addr.IsValid() {
		return nil, EINVAL
	}
	return l.GetNameInfoRaw(inetSockaddr(addr), flags)
}

// GetNameInfoRaw is GetNameInfo for a raw struct sockaddr.
func (l *Loop) GetNameInfoRaw(addr []byte, flags int) (*NameInfoFuture, error) {
	if len(addr) == 0 || len(addr) > maxSockaddrLen || !fitsInt32(flags) {
		return nil, EINVAL
	}
	c, err := NewCBuf(uintptr(len(addr)))
	if err != nil {
		return nil, err
	}
	defer c.Free()
	copy(unsafe.Slice((*byte)(c.Ptr()), len(addr)), addr)
	id, err := outCall(func(out unsafe.Pointer) int32 {
		return l.raw().GetNameInfo(l.id, c.Ptr(), uint32(len(addr)), int32(flags), out)
	})
	if err != nil {
		return nil, err
	}
	f := &NameInfoFuture{Future{lib: l.lib, loop: l, id: id, owned: true}}
	ownedFutures.Store(id, &f.Future)
	return f, nil
}

// maxSockaddrLen is sizeof(struct sockaddr_storage).
const maxSockaddrLen = 128

// Names returns the host and service names; the error is the future's
// (ESTATE while pending).
func (f *NameInfoFuture) Names() (host, service string, err error) {
	out, err := getSlot()
	if err != nil {
		return "", "", err
	}
	defer putSlot(out)
	if err := check(f.raw().FutureResult(f.id, out)); err != nil {
		return "", "", err
	}
	// "host\0service\0" in C memory the future owns until released.
	p := *(*unsafe.Pointer)(out)
	host = goString(p)
	return host, goString(unsafe.Add(p, len(host)+1)), nil
}
