"""Child processes that die with their parent, and signal handling that works when signals were ignored.

Every server this project starts for the length of one command (Label Studio under ``posthoc demo`` and the
tests, the ML backend under the demo, PostgreSQL for a test run) is started with ``preexec_fn=die_with_parent()``:
on Linux the kernel then sends it ``SIGTERM`` (PostgreSQL: ``SIGINT``, its fast shutdown) when the process that
started it dies, also when that parent was ``SIGKILL``-ed and could run no clean-up (``prctl(PR_SET_PDEATHSIG)``).
Servers that must outlive the command (``posthoc ls start``) are started by a keeper process that dies with the
command until they answer, then calls :func:`outlive_parent` (a ``SIGKILL`` of the starting command therefore
leaves nothing running).

Two facts to keep in mind:

* The death signal follows the *thread* that forked the child: start servers from the main thread (all of this
  project's code does) or they stop when a worker thread ends.
* A process started from a shell in the background (``nohup``, ``cmd &`` in a non-interactive shell, some CI
  runners) inherits ``SIGINT`` as *ignored*; Python then installs no ``KeyboardInterrupt`` handler.
  :func:`restore_interrupt_signals` puts the default handlers back so Ctrl-C / ``kill -INT`` and ``SIGTERM``
  stop a serving command in every case.
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import signal
import sys
from collections.abc import Callable
from types import FrameType

_PR_SET_PDEATHSIG = 1
#: libc, loaded before any fork (a ``preexec_fn`` must not import or load libraries)
_LIBC = ctypes.CDLL(None, use_errno=True) if sys.platform.startswith("linux") else None


def die_with_parent(sig: int = signal.SIGTERM) -> Callable[[], None]:
    """A ``preexec_fn`` for :class:`subprocess.Popen`: the child gets ``sig`` when its parent dies (Linux only;
    elsewhere it only resets ``SIGINT``). It also resets ``SIGINT`` to its default, so an inherited "ignored"
    does not carry over. It works with ``user=`` too (Python switches user before it runs the function).

    The "parent" is the *thread* that forked (``prctl(2)``): a server started from a worker thread is stopped
    when that thread ends. Start servers from the main thread (every caller here does; the PostgreSQL fault
    test found it)."""

    def preexec() -> None:
        signal.signal(signal.SIGINT, signal.SIG_DFL)
        if _LIBC is not None:
            _LIBC.prctl(_PR_SET_PDEATHSIG, int(sig), 0, 0, 0)

    return preexec


def outlive_parent() -> None:
    """Undo :func:`die_with_parent` in this process itself (``prctl(PR_SET_PDEATHSIG, 0)``): a keeper started so
    that it dies with its starter while it starts servers calls it once they answer, then outlives the starter
    (``posthoc ls start``, :mod:`posthoc.jobs.server_keeper`)."""
    if _LIBC is not None:
        _LIBC.prctl(_PR_SET_PDEATHSIG, 0, 0, 0, 0)


def _raise_keyboard_interrupt(signum: int, frame: FrameType | None) -> None:
    raise KeyboardInterrupt


def restore_interrupt_signals() -> None:
    """Make ``SIGINT`` and ``SIGTERM`` raise :class:`KeyboardInterrupt` in this (main-thread) process, also when
    ``SIGINT`` was inherited as ignored, so ``finally`` blocks stop the servers this process started."""
    signal.signal(signal.SIGINT, signal.default_int_handler)
    signal.signal(signal.SIGTERM, _raise_keyboard_interrupt)


def pid_alive(pid: int) -> bool:
    """Whether a process with ``pid`` exists (and is not a zombie we could reap)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    with contextlib.suppress(ChildProcessError, OSError):
        reaped, _ = os.waitpid(pid, os.WNOHANG)
        if reaped == pid:
            return False
    return True
