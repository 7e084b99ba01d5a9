// SPDX-License-Identifier: MIT

package libloop

import (
	"os"

	"golang.org/x/sys/unix"
)

// spawnState is what a loop keeps from one Spawn to the next: how children
// start, where the host's environment is, and one /dev/null shared by every
// child that wants it (one open per loop, not three per spawn).
type spawnState struct {
	spawner Spawner // the host's (host.go), or nil: Go's ForkExec
	env     HostEnv // the host's (host.go), or nil: os.Environ
	null    int     // the open /dev/null when hasNull
	hasNull bool    // null is open
}

func (s *spawnState) environ() []string {
	if s.env != nil {
		return s.env.Environ()
	}
	return os.Environ()
}

func (s *spawnState) getenv(key string) string {
	if s.env != nil {
		return s.env.Getenv(key)
	}
	return os.Getenv(key)
}

// devNull returns the loop's /dev/null (read-write, close-on-exec; the
// child gets a dup2 of it), opening it the first time.
func (s *spawnState) devNull() (int, error) {
	if !s.hasNull {
		fd, err := unix.Open("/dev/null", unix.O_RDWR|unix.O_CLOEXEC, 0)
		if err != nil {
			return -1, err
		}
		s.null, s.hasNull = fd, true
	}
	return s.null, nil
}

// close closes the loop's /dev/null (Loop.Close).
func (s *spawnState) close() {
	if s.hasNull {
		unix.Close(s.null)
		s.hasNull = false
	}
}
