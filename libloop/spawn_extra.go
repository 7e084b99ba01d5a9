// SPDX-License-Identifier: MIT

package libloop

import (
	"os"
	"slices"
	"syscall"

	"golang.org/x/sys/unix"
)

// SpawnExtra is what Python's Popen offers beyond stdio, cwd, env and a
// new session (the C ABI's ll_spawn_extra). Its zero value is not "nothing
// extra" (UID 0 is root): start from NoExtra() and set what you need.
type SpawnExtra struct {
	// PassFDs stay open in the child at the same numbers, close-on-exec
	// cleared (Popen's pass_fds). Each must be open (else EBADF); 0..2 are
	// the child's stdio already and change nothing.
	PassFDs []int
	// InheritFDs keeps every fd the host left without FD_CLOEXEC open in
	// the child (Popen's close_fds=False); exec closes the others.
	InheritFDs bool
	UID, GID   int // setresuid/setresgid in the child; -1 leaves them
	// Groups are the child's supplementary groups when SetGroups (an empty
	// Groups drops them all); without SetGroups they are the parent's.
	Groups    []uint32
	SetGroups bool
	Umask     int // the child's umask (0..0777); -1 leaves it
	// Pgid: -1 none (ProcessOptions.Flags decide), 0 the child leads a new
	// process group, > 0 the child joins that group (setpgid(0, Pgid)).
	Pgid int
	// PipeSize is set with F_SETPIPE_SZ on each pipe Spawn makes (Linux;
	// ENOTSUP elsewhere); 0 keeps the system's default.
	PipeSize int
}

// NoExtra returns a SpawnExtra that asks for nothing: Spawn behaves as
// with a nil ProcessOptions.Extra.
func NoExtra() SpawnExtra { return SpawnExtra{UID: -1, GID: -1, Umask: -1, Pgid: -1} }

// Bounds on what SpawnExtra may list (the kernel's NGROUPS_MAX, and a
// number of fds no process reaches).
const (
	maxGroups  = 65536
	maxPassFDs = 1 << 20
)

// SpawnRequest is what a Spawner starts: the resolved program, the
// child's stdio sources (never crossed: a source below 3 is its own
// target, Spawn moves the others up), and the extras, normalized: Pgid
// also carries ProcessNewGroup, PassFDs are sorted, unique and >= 3.
type SpawnRequest struct {
	Path    string
	Argv    []string
	Env     []string // nil: the host's own, inherited
	Dir     string   // "": inherited
	Stdio   [3]int
	Session bool // setsid
	SpawnExtra
}

// spawnRequest checks o's flags and extras (before any fd is made) and
// returns the request without path and stdio; EINVAL for a bad value,
// EBADF for a pass fd that is not open.
func spawnRequest(o *ProcessOptions) (*SpawnRequest, error) {
	r := &SpawnRequest{Argv: o.Argv, Env: o.Env, Dir: o.Dir, Session: o.Flags&ProcessNewSession != 0,
		SpawnExtra: NoExtra()}
	if o.Extra != nil {
		r.SpawnExtra = *o.Extra
	}
	x := &r.SpawnExtra
	if x.UID < -1 || x.GID < -1 || x.Umask < -1 || x.Umask > 0o777 || x.Pgid < -1 || x.PipeSize < 0 ||
		len(x.Groups) > maxGroups || len(x.PassFDs) > maxPassFDs || (!x.SetGroups && len(x.Groups) > 0) {
		return nil, EINVAL
	}
	if r.Session && x.Pgid >= 0 {
		return nil, EINVAL // a session leader cannot change its group
	}
	if o.Flags&ProcessNewGroup != 0 {
		if x.Pgid > 0 {
			return nil, EINVAL // a new group and another's: one or the other
		}
		if !r.Session { // a new session is a new group already
			x.Pgid = 0
		}
	}
	if x.PipeSize > 0 && !canSetPipeSize {
		return nil, unix.ENOTSUP
	}
	keep := make([]int, 0, len(x.PassFDs))
	for _, fd := range x.PassFDs {
		if fd < 0 {
			return nil, EINVAL
		}
		if _, err := unix.FcntlInt(uintptr(fd), unix.F_GETFD, 0); err != nil {
			return nil, err
		}
		if fd >= 3 {
			keep = append(keep, fd)
		}
	}
	slices.Sort(keep)
	x.PassFDs = slices.Compact(keep)
	if x.Groups != nil {
		x.Groups = slices.Clone(x.Groups) // the spawner's, not the caller's
	}
	return r, nil
}

// uncross moves each stdio source that an earlier dup2 onto 0..2 would
// clobber (e.g. stdout from fd 0 while stdin is a pipe) above 2, with a
// close-on-exec dup; the copies are returned for closing after the spawn.
// So every spawner may dup2 in order.
func uncross(stdio *[3]int) (moved []int, err error) {
	for j := 1; j < 3; j++ {
		src := stdio[j]
		if src < 0 || src >= j || stdio[src] == src {
			continue // not a target already replaced by then
		}
		fd, err := unix.FcntlInt(uintptr(src), unix.F_DUPFD_CLOEXEC, 3)
		if err != nil {
			return moved, err
		}
		moved = append(moved, fd)
		for k := j; k < 3; k++ { // a later fd from the same source: the copy too
			if stdio[k] == src {
				stdio[k] = fd
			}
		}
	}
	return moved, nil
}

// childFiles lists the child's fds for ForkExec: stdio as 0..2, each pass
// fd at its own number, and -1 (closed in the child) for the other fds up
// to closeUpTo. With inherit, an fd the host left without FD_CLOEXEC is
// kept at its number, and closeUpTo is ignored: exec closes the others.
func childFiles(r *SpawnRequest, closeUpTo int) []uintptr {
	n := 3
	if !r.InheritFDs {
		n = max(n, closeUpTo+1)
	}
	if len(r.PassFDs) > 0 {
		n = max(n, r.PassFDs[len(r.PassFDs)-1]+1)
	}
	files := make([]uintptr, n)
	for i := range files {
		files[i] = ^uintptr(0)
		if i >= 3 && r.InheritFDs {
			if flags, err := unix.FcntlInt(uintptr(i), unix.F_GETFD, 0); err == nil && flags&unix.FD_CLOEXEC == 0 {
				files[i] = uintptr(i)
			}
		}
	}
	for i, fd := range r.Stdio {
		files[i] = uintptr(fd)
	}
	for _, fd := range r.PassFDs {
		files[fd] = uintptr(fd)
	}
	return files
}

// forkExec starts r with Go's ForkExec (a loop without a Spawner). It
// does all of SpawnExtra but Umask (ENOTSUP: ForkExec has no umask step,
// and setting the parent's would race its other threads). Credentials are
// all-or-nothing in ForkExec: a UID or GID left at -1 is set to the
// parent's real one.
func forkExec(r *SpawnRequest, pidfd *int) (int, error) {
	if r.Umask >= 0 {
		return -1, unix.ENOTSUP
	}
	sys := &syscall.SysProcAttr{Setsid: r.Session, Setpgid: r.Pgid >= 0, Pgid: max(r.Pgid, 0)}
	if r.UID >= 0 || r.GID >= 0 || r.SetGroups {
		c := &syscall.Credential{Uid: uint32(os.Getuid()), Gid: uint32(os.Getgid()),
			Groups: r.Groups, NoSetGroups: !r.SetGroups}
		if r.UID >= 0 {
			c.Uid = uint32(r.UID)
		}
		if r.GID >= 0 {
			c.Gid = uint32(r.GID)
		}
		sys.Credential = c
	}
	setPidFD(sys, pidfd)
	attr := &syscall.ProcAttr{Dir: r.Dir, Env: r.Env, Files: childFiles(r, closeUpTo()), Sys: sys}
	return syscall.ForkExec(r.Path, r.Argv, attr)
}
