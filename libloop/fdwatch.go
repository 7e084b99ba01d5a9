// SPDX-License-Identifier: MIT

package libloop

// fdWatch is what is registered for one fd: the owner its readiness goes
// to, like asyncio's selector keys. A slot is 24 bytes (one interface and
// three flags): a server holds one per connection, and the add_reader and
// add_writer handles, which no owned fd has, sit behind the owner
// (fdHandles) rather than in a field of every slot (32 bytes).
type fdWatch struct {
	// owner is the transport, listener or other object that owns the fd,
	// or, for an fd watched with AddReader/AddWriter, its *fdHandles.
	owner ioOwner
	mask  uint8
	used  bool // the fdTable slot holds a record
	// quiet: the fd keeps the loop alive no more (refs.go): an
	// unreferenced transport's or server's, the signal pipe, a pidfd.
	quiet bool
}

// fdHandles are the callbacks of an fd watched with AddReader ([0]) and
// AddWriter ([1]); each is queued every iteration the fd is ready for it.
type fdHandles [2]*Handle

// ioReady queues the callbacks the readiness in mask is for, at once (not
// through runIO as an owner's readiness is).
func (hs *fdHandles) ioReady(mask uint8) {
	if h := hs[0]; mask&evRead != 0 && h != nil {
		h.loop.queueReady(h)
	}
	if h := hs[1]; mask&evWrite != 0 && h != nil {
		h.loop.queueReady(h)
	}
}

// handles returns w's AddReader/AddWriter callbacks, or nil when an owner
// has the fd.
func (w *fdWatch) handles() *fdHandles {
	hs, _ := w.owner.(*fdHandles)
	return hs
}

// AddReader calls fn each iteration fd is readable, replacing any reader
// already set for fd. A closed or invalid fd fails with -EBADF (or the
// selector's errno, e.g. -EPERM for a regular file).
func (l *Loop) AddReader(fd int, fn func()) error {
	return l.addWatch(fd, evRead, fn, HostCall{})
}

// AddWriter calls fn each iteration fd is writable; see AddReader.
func (l *Loop) AddWriter(fd int, fn func()) error {
	return l.addWatch(fd, evWrite, fn, HostCall{})
}

// AddReaderHost is AddReader for a host callback (fc.Kind HostIO).
func (l *Loop) AddReaderHost(fd int, fc HostCall) error {
	return l.addWatch(fd, evRead, nil, fc)
}

// AddWriterHost is AddWriter for a host callback.
func (l *Loop) AddWriterHost(fd int, fc HostCall) error {
	return l.addWatch(fd, evWrite, nil, fc)
}

// RemoveReader stops watching fd for reading; it reports whether a reader
// was registered.
func (l *Loop) RemoveReader(fd int) (bool, error) { return l.removeWatch(fd, evRead) }

// RemoveWriter stops watching fd for writing; see RemoveReader.
func (l *Loop) RemoveWriter(fd int) (bool, error) { return l.removeWatch(fd, evWrite) }

func (l *Loop) addWatch(fd int, dir uint8, fn func(), fc HostCall) error {
	if l.closed.Load() {
		return ECLOSED
	}
	if fn == nil && fc.Fn == 0 {
		return EINVAL
	}
	if fd < 0 || fd > 1<<30 {
		return sysEBADF
	}
	w := l.fds.get(int32(fd))
	old := uint8(0)
	if w != nil {
		if w.handles() == nil {
			return sysEBUSY // asyncio: "File descriptor is used by transport"
		}
		old = w.mask
	}
	if err := l.setInterest(fd, old, old|dir); err != nil {
		return err
	}
	if w == nil {
		w = l.fds.put(int32(fd))
		w.owner = new(fdHandles)
		l.nWatched++
	}
	h := l.newHandle() // the registration's reference
	h.gofn, h.call = fn, fc
	hs := w.handles()
	prev := &hs[0]
	if dir == evWrite {
		prev = &hs[1]
	}
	if *prev != nil {
		(*prev).Cancel()
		l.unref(*prev)
	}
	*prev = h
	w.mask = old | dir
	return nil
}

func (l *Loop) removeWatch(fd int, dir uint8) (bool, error) {
	if l.closed.Load() {
		return false, nil
	}
	w := l.fds.get(int32(fd))
	if w == nil || w.mask&dir == 0 || w.handles() == nil {
		return false, nil
	}
	err := l.setInterest(fd, w.mask, w.mask&^dir)
	hs := w.handles()
	h := hs[0]
	if dir == evWrite {
		h, hs[1] = hs[1], nil
	} else {
		hs[0] = nil
	}
	h.Cancel()
	l.unref(h)
	w.mask &^= dir
	if w.mask == 0 {
		l.fds.del(int32(fd))
		l.nWatched--
	}
	return true, err
}

// watchOwner sets the interest of an fd owned by a transport or listener
// (mask 0 keeps it registered with the loop but not the selector).
func (l *Loop) watchOwner(fd int, o ioOwner, mask uint8) error {
	w := l.fds.get(int32(fd))
	if w != nil && w.owner != o {
		return sysEBUSY
	}
	old := uint8(0)
	if w != nil {
		old = w.mask
		if old == mask {
			return nil
		}
	}
	if err := l.setInterest(fd, old, mask); err != nil {
		return err
	}
	if w == nil {
		w = l.fds.put(int32(fd))
		w.owner = o
		l.nWatched++
	}
	w.mask = mask
	return nil
}

// unwatchOwner forgets an owned fd; call it before closing the fd.
func (l *Loop) unwatchOwner(fd int, o ioOwner) {
	w := l.fds.get(int32(fd))
	if w == nil || w.owner != o {
		return
	}
	if w.mask != 0 {
		l.setInterest(fd, w.mask, 0)
	}
	l.forgetQuiet(w)
	l.fds.del(int32(fd))
	l.nWatched--
}

// forgetFired forgets an owned fd registered with evOnce whose one event
// has fired, with no EPOLL_CTL_DEL: the registration is disarmed and goes
// when the fd's file is closed for good (the owner closes it next).
func (l *Loop) forgetFired(fd int, o ioOwner) {
	w := l.fds.get(int32(fd))
	if w == nil || w.owner != o {
		return
	}
	l.forgetQuiet(w)
	l.fds.del(int32(fd))
	l.nWatched--
}

// rearm re-enables an owned evOnce fd whose event fired too early.
func (l *Loop) rearm(fd int, o ioOwner) error {
	w := l.fds.get(int32(fd))
	if w == nil || w.owner != o {
		return nil
	}
	return l.setInterest(fd, w.mask, w.mask)
}

func (l *Loop) dropWatch(fd int32, w *fdWatch) {
	hs := w.handles()
	if hs == nil {
		if c, ok := w.owner.(interface{ loopClosing() }); ok {
			c.loopClosing()
		}
		l.setInterest(int(fd), w.mask, 0)
		l.forgetQuiet(w)
		l.fds.del(fd)
		l.nWatched--
		return
	}
	for _, h := range hs {
		if h != nil {
			h.Cancel()
			l.unref(h)
		}
	}
	l.setInterest(int(fd), w.mask, 0)
	l.fds.del(fd)
	l.nWatched--
}

// queueReady puts an fd watcher's handle on the ready queue for this
// iteration, taking a reference for the queue.
func (l *Loop) queueReady(h *Handle) {
	h.refs++
	l.ready.push(h)
}

// forgetQuiet takes an fd that goes from the count of quiet ones.
func (l *Loop) forgetQuiet(w *fdWatch) {
	if w.quiet {
		l.refs.quietFDs--
	}
}
