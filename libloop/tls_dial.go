// SPDX-License-Identifier: MIT

package libloop

// DialTLS connects to host:port as DialTCP does, then runs a TLS client
// handshake (server name: serverName, else the config's, else host)
// before ConnectionMade. done gets the transport once the handshake
// completed, or the failure: a connect error, or the handshake's LL_ETLS*
// code / ETIMEDOUT (the transport is then gone without any event).
func (l *Loop) DialTLS(host string, port int, cfg *TLSConfig, serverName string, proto Protocol, done DialFunc) error {
	if cfg == nil {
		return EINVAL
	}
	return l.DialTCPWith(host, port, DialOptions{TLS: cfg, ServerName: serverName}, proto, done)
}

// handshake runs the client handshake on a connected socket. The dialer
// keeps the transport meanwhile, so an abort (a cancelled future or
// context) can end the handshake: the transport then goes without any
// event and done gets the abort's error.
func (d *dialer) handshake(t *Transport) {
	d.hs = t
	err := t.startTLS(d.opts.TLS, false, d.opts.ServerName, true, func(err error) {
		d.hs = nil
		if err == nil && d.settled() {
			t.Refuse()
			err = ECANCELLED
		}
		if err != nil {
			if d.abortErr != nil {
				err = d.abortErr
			}
			d.done(nil, err)
			return
		}
		t.loop.emit(Event{Kind: ConnectionMade, FD: int(t.evFD), T: t})
		d.done(t, nil)
	})
	if err != nil {
		d.hs = nil
		t.Refuse()
		d.done(nil, err)
	}
}

// ListenTLS listens as ListenTCP does; each accepted connection runs a TLS
// server handshake with cfg before its ConnectionMade. A connection whose
// handshake fails gets one event, ConnectionLost with the LL_ETLS* code
// (or ETIMEDOUT), and no ConnectionMade.
func (l *Loop) ListenTLS(host string, port, backlog, flags int, cfg *TLSConfig, proto Protocol) (*Server, error) {
	if cfg == nil {
		return nil, EINVAL
	}
	s, err := l.ListenTCP(host, port, backlog, flags, proto)
	if err != nil {
		return nil, err
	}
	s.tls = cfg
	return s, nil
}

// ServeFDTLS serves a listening socket the host made, as ServeFD does,
// with ListenTLS's handshake before each connection's ConnectionMade: a
// host that binds its own sockets (asyncio's create_server) gets the same
// TLS server as ListenTLS gives.
func (l *Loop) ServeFDTLS(fd int, cfg *TLSConfig, proto Protocol) (*Server, error) {
	if cfg == nil {
		return nil, EINVAL
	}
	s, err := l.ServeFD(fd, proto)
	if err != nil {
		return nil, err
	}
	s.tls = cfg
	return s, nil
}

// handshake runs the server handshake on an accepted connection.
func (s *Server) handshake(t *Transport) {
	err := t.startTLS(s.tls, true, "", false, func(err error) {
		if err == nil {
			t.loop.emit(Event{Kind: ConnectionMade, FD: int(t.evFD), T: t})
		}
	})
	if err != nil {
		t.finish(Code(err))
	}
}
