"""gunicorn settings of the gateway's authoriser (``posthoc gateway serve`` passes
``--config python:posthoc_backend.gateway_gunicorn``): its worker dies with its master.

The master is started to die with the process that started it (:func:`posthoc.processes.die_with_parent`); its
worker is the master's child, so on its own it outlives a master that died at once (a Ctrl-C to the demo's whole
process group: in 1 of 5 runs an authoriser was still alive 15 s after the demo had exited, issue 47; the test
reproduced it: a worker that had not exited on its master's ``SIGQUIT`` 20 s after the ``SIGINT``). Each worker
asks the kernel for ``SIGKILL`` when its master goes: a worker without its master still holds the listening
socket and has nothing left to finish (logouts are on disk as they are made). ``graceful_timeout``: a stopping
master waits 5 s for its worker (gunicorn's default is 30 s), then kills it.
"""

from __future__ import annotations

import signal
from typing import Any

from posthoc.processes import die_with_parent

#: seconds a stopping master waits for its worker's requests before it kills it
graceful_timeout = 5


def post_fork(server: Any, worker: Any) -> None:
    """gunicorn's hook in a new worker: die with the master (``SIGKILL``)."""
    die_with_parent(signal.SIGKILL)()
