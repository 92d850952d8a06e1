"""The loopback address a local Label Studio (and its PostgreSQL cluster) listens on, and its free ports."""

from __future__ import annotations

import socket

LOOPBACK = "127.0.0.1"


def port_is_free(port: int, host: str = LOOPBACK) -> bool:
    """Whether nothing listens on ``host:port`` and it can be bound.

    The probe binds with ``SO_REUSEADDR``, as Label Studio's server does: sockets of a stopped server left in
    TIME-WAIT (about a minute after a crash) do not make the port look taken, a listener still does."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        if probe.connect_ex((host, port)) == 0:
            return False
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            sock.bind((host, port))
        except OSError:
            return False
    return True


def free_port(host: str = LOOPBACK) -> int:
    """A port the OS reports free on ``host`` right now."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind((host, 0))
        return int(sock.getsockname()[1])
