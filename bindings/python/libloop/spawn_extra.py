# SPDX-License-Identifier: MIT
"""Popen's process keywords beyond stdio, cwd, env and start_new_session,
mapped onto ll_spawn_extra (ll_spawn_ex): pass_fds, close_fds, user, group,
extra_groups, umask, process_group and pipesize, with Popen's own checks
and lookups (user and group names through pwd and grp).

preexec_fn stays refused: ll_spawn starts the child vfork-style, sharing
the parent's memory until it execs, so no Python code can run in it.
"""

import warnings
from ctypes import c_int, c_uint

from . import _netlib as _net

try:
    import fcntl
    _CAN_SIZE_PIPES = hasattr(fcntl, 'F_SETPIPE_SZ')
except ImportError:  # pragma: no cover (not POSIX)
    _CAN_SIZE_PIPES = False

# Popen keywords ll_spawn_ex cannot honour, and the value that means "not
# used" (startupinfo and creationflags are Windows-only in Popen itself).
UNSUPPORTED = {'preexec_fn': None, 'startupinfo': None, 'creationflags': 0}

_ID_MAX = 2**31 - 1   # ll_spawn_extra's uid and gid are C ints


def _uid(user):
    if isinstance(user, str):
        import pwd
        uid = pwd.getpwnam(user).pw_uid
    elif isinstance(user, int):
        uid = user
    else:
        raise TypeError('User must be a string or an integer')
    if uid < 0:
        raise ValueError(f'User ID cannot be negative, got {uid}')
    if uid > _ID_MAX:
        raise ValueError(f'libloop: user ID {uid} is above {_ID_MAX}')
    return uid


def _gid(group, what='Group'):
    if isinstance(group, str):
        import grp
        gid = grp.getgrnam(group).gr_gid
    elif isinstance(group, int):
        gid = group
    else:
        raise TypeError(f'{what} must be a string or an integer')
    if gid < 0:
        raise ValueError(f'Group ID cannot be negative, got {gid}')
    if gid > _ID_MAX:
        raise ValueError(f'libloop: group ID {gid} is above {_ID_MAX}')
    return gid


def spawn_extra(kwargs):
    """Pops Popen's extra keywords from kwargs; returns an ll_spawn_extra
    (None when nothing is asked: plain ll_spawn) and the arrays it points
    to (keep them alive over the call). ValueError/TypeError as Popen's."""
    for name, unused in UNSUPPORTED.items():
        value = kwargs.pop(name, unused)
        if value != unused:
            if name == 'preexec_fn':
                raise ValueError('libloop: preexec_fn is not supported: ll_spawn starts the child '
                                 'vfork-style, sharing this process\'s memory until it execs, so no '
                                 'Python code can run in it (pass_fds, user, group, extra_groups, '
                                 'umask, process_group and start_new_session are supported)')
            raise ValueError(f'libloop: {name}={value!r} is not supported on POSIX')
    pass_fds = tuple(kwargs.pop('pass_fds', ()))
    close_fds = kwargs.pop('close_fds', True)
    user = kwargs.pop('user', None)
    group = kwargs.pop('group', None)
    extra_groups = kwargs.pop('extra_groups', None)
    umask = kwargs.pop('umask', -1)
    process_group = kwargs.pop('process_group', None)
    pipesize = kwargs.pop('pipesize', -1)
    if pipesize is None:
        pipesize = -1
    if not isinstance(pipesize, int):
        raise TypeError('pipesize must be an integer')
    if pass_fds and not close_fds:
        warnings.warn('pass_fds overriding close_fds.', RuntimeWarning)
        close_fds = True
    x = _net.SpawnExtra()
    keep = []
    asked = False
    if pass_fds:
        fds = []
        for fd in pass_fds:
            if not isinstance(fd, int) or fd < 0 or fd > _ID_MAX:
                raise ValueError('bad value(s) in fds_to_keep')
            fds.append(fd)
        arr = (c_int * len(fds))(*sorted(set(fds)))
        x.pass_fds, x.n_pass_fds = arr, len(arr)
        keep.append(arr)
        asked = True
    if not close_fds:
        x.inherit_fds = 1
        asked = True
    if user is not None:
        x.uid = _uid(user)
        asked = True
    if group is not None:
        x.gid = _gid(group)
        asked = True
    if extra_groups is not None:
        gids = [_gid(g, 'Items in extra_groups') for g in extra_groups]
        arr = (c_uint * len(gids))(*gids)
        x.groups, x.n_groups = arr, len(gids)
        keep.append(arr)
        asked = True
    if umask is not None and umask >= 0:
        x.umask = umask & 0o777   # as umask(2) takes it
        asked = True
    if process_group is not None and process_group >= 0:
        if process_group > _ID_MAX:
            raise ValueError(f'libloop: process_group {process_group} is above {_ID_MAX}')
        x.pgid = process_group
        asked = True
    if pipesize > 0 and _CAN_SIZE_PIPES:   # Popen ignores it where it cannot
        x.pipe_size = min(pipesize, _ID_MAX)
        asked = True
    return (x if asked else None), keep
