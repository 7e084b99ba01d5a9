// SPDX-License-Identifier: MIT

package tests

import (
	"testing"

	ll "github.com/libloop/libloop/bindings/go"
	"golang.org/x/sys/unix"
)

// Calls on one transport from another's callback, in the iteration that
// read both (the binding's batch sink): after PauseReading, Close or Abort
// the second transport gets no read event; a paused one gets its bytes on
// ResumeReading, before newer ones.

type stopOther struct {
	ll.BaseProtocol
	i     int
	sc    *stopScript
	data  []byte
	late  int
	lost  bool
	trans *ll.Transport
}

type stopScript struct {
	action string
	armed  bool
	target int
	peers  [2]*stopOther
}

func (p *stopOther) ConnectionMade(t *ll.Transport) { p.trans = t }

func (p *stopOther) DataReceived(_ *ll.Transport, data []byte) {
	s := p.sc
	if p.i == s.target {
		p.late++
	}
	p.data = append(p.data, data...)
	if s.armed && p.i != s.target {
		s.armed = false
		s.target = 1 - p.i
		o := s.peers[s.target].trans
		switch s.action {
		case "pause":
			o.PauseReading()
		case "close":
			o.Close()
		case "abort":
			o.Abort()
		}
	}
}

func (p *stopOther) ConnectionLost(*ll.Transport, error) { p.lost = true }

func TestReadEventsAfterStopFromOtherTransport(t *testing.T) {
	for _, action := range []string{"pause", "close", "abort"} {
		t.Run(action, func(t *testing.T) {
			l := newLoop(t)
			s := &stopScript{action: action, target: -1}
			var peer [2]int
			for i := range 2 {
				p, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_STREAM|unix.SOCK_CLOEXEC|unix.SOCK_NONBLOCK, 0)
				if err != nil {
					t.Fatal(err)
				}
				peer[i] = p[1]
				defer unix.Close(p[1])
				s.peers[i] = &stopOther{i: i, sc: s}
				if _, err := l.OpenTransport(p[0], ll.KindStream, s.peers[i]); err != nil {
					t.Fatal(err)
				}
			}
			for i := 0; i < 20 && (s.peers[0].trans == nil || s.peers[1].trans == nil); i++ {
				l.RunOnce(true)
			}
			s.armed = true
			unix.Write(peer[0], []byte("a"))
			unix.Write(peer[1], []byte("b"))
			for i := 0; i < 50 && s.target < 0; i++ {
				l.RunOnce(true)
			}
			if s.target < 0 {
				t.Fatal("no data arrived")
			}
			for range 3 {
				l.RunOnce(true)
			}
			tg := s.peers[s.target]
			if tg.late != 0 || len(tg.data) != 0 {
				t.Fatalf("%d read events after %s, got %q", tg.late, action, tg.data)
			}
			if action != "pause" {
				for i := 0; i < 50 && !tg.lost; i++ {
					l.RunOnce(true)
				}
				if !tg.lost {
					t.Fatal("no ConnectionLost")
				}
				return
			}
			unix.Write(peer[tg.i], []byte("+"))
			l.RunOnce(true)
			s.target = -1
			if err := tg.trans.ResumeReading(); err != nil {
				t.Fatal(err)
			}
			want := string("ab"[tg.i]) + "+"
			for i := 0; i < 50 && len(tg.data) < len(want); i++ {
				l.RunOnce(true)
			}
			if string(tg.data) != want {
				t.Fatalf("after resume: %q, want %q", tg.data, want)
			}
			for _, p := range s.peers {
				p.trans.Abort()
			}
			for i := 0; i < 20 && !(s.peers[0].lost && s.peers[1].lost); i++ {
				l.RunOnce(true)
			}
		})
	}
}
