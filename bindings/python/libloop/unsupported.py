"""AbstractEventLoop methods that later issues bring: they raise
NotImplementedError naming what is missing, never a silent wrong answer."""

_MISSING = {
    'create_datagram_endpoint': 'transports (UDP)',
    'connect_read_pipe': 'pipe transports',
    'connect_write_pipe': 'pipe transports',
    'sock_sendto': 'sock_sendto',
    'sock_recvfrom_into': 'sock_recvfrom_into',
    'subprocess_exec': 'subprocesses',
    'subprocess_shell': 'subprocesses',
    'add_signal_handler': 'signal handlers',
    'remove_signal_handler': 'signal handlers',
}


def _make(name, what):
    def method(self, *args, **kwargs):
        raise NotImplementedError(
            f"libloop.EventLoop.{name}() is not implemented yet "
            f"(libloop has no {what} so far); use asyncio's default loop "
            f"for this program")
    method.__name__ = name
    method.__doc__ = f"Not implemented yet: needs {what}."
    return method


class UnsupportedMixin:
    """Placeholders for the methods later issues implement."""


for _name, _what in _MISSING.items():
    setattr(UnsupportedMixin, _name, _make(_name, _what))
del _name, _what
