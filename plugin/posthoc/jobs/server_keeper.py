"""The keeper of ``posthoc ls start``: one small process that starts Label Studio and, with a manifest, the study
gateway beside it (:class:`~posthoc.jobs.gateway_process.GatewayProcesses`), keeps them, and stops them.

Why a keeper: a server that must outlive the command yet stop when the command is killed *while it starts* cannot
be had from the command alone. ``ls start`` runs ``python -m posthoc.jobs.server_keeper`` in a session of
its own with :func:`~posthoc.processes.die_with_parent`; the keeper starts every server with ``die_with_parent``
too, so until they answer a ``SIGKILL`` of ``ls start`` takes the keeper and, through the kernel's parent-death
signal, every server with it. Once all answer, the keeper writes the state file (``server.json``: its own pid,
Label Studio's pid, port and URL, the gateway's URL), calls :func:`~posthoc.processes.outlive_parent` and tells
``ls start`` on a pipe (one JSON line). ``ls stop`` sends ``SIGTERM`` to the keeper's process group: the keeper
stops nginx, the authoriser and Label Studio, and removes the state file; if the keeper itself is killed, the
servers get their parent-death signal. If Label Studio or a gateway process dies, the keeper stops the rest.
With ``workers`` (``ls start --workers N``) Label Studio is its WSGI app under gunicorn
(:class:`~posthoc.labelstudio.app_server.AppServer`): the keeper holds gunicorn's master, whose workers exit with it.
"""

from __future__ import annotations

import contextlib
import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import IO

from posthoc.atomic import write_text_atomic
from posthoc.errors import PosthocInputError, PosthocServiceError
from posthoc.labelstudio.database import DatabaseSettings
from posthoc.labelstudio.server import GATEWAY_FOLDER, LabelStudioServer, database_choice
from posthoc.labelstudio.server_log import STATE_FILE
from posthoc.processes import outlive_parent, restore_interrupt_signals


def _report(out: IO[str], answer: dict[str, object]) -> None:
    with contextlib.suppress(OSError):
        out.write(json.dumps(answer) + "\n")
        out.flush()


def _keep(children: dict[str, subprocess.Popen[bytes] | None]) -> str:
    """Wait until a child exits (the name of the first one that did)."""
    while True:
        for name, process in children.items():
            if process is not None and process.poll() is not None:
                return name
        time.sleep(1.0)


def _server(data_dir: Path, *, port: int | None, workers: object,
            database: DatabaseSettings | None) -> LabelStudioServer:
    """``label-studio start`` (one process), or with ``workers`` Label Studio's WSGI app under gunicorn
    (:class:`~posthoc.labelstudio.app_server.AppServer`, which refuses several on SQLite)."""
    if not isinstance(workers, int):
        return LabelStudioServer(data_dir, port=port, database=database)
    from posthoc.labelstudio.app_server import AppServer

    return AppServer(data_dir, workers=workers, port=port, database=database)


def keep(settings: dict[str, object], out: IO[str]) -> int:
    """The keeper's work (see the module docstring); ``out``: the pipe to ``ls start``."""
    from posthoc.jobs.gateway_process import GatewayProcesses

    restore_interrupt_signals()
    starter = os.getppid()
    data_dir = Path(str(settings["data_dir"]))
    port, gateway_port = settings.get("port"), settings.get("gateway_port")
    manifest = settings.get("gateway_manifest")
    with contextlib.ExitStack() as stack:
        try:
            server = _server(data_dir, port=port if isinstance(port, int) else None, workers=settings.get("workers"),
                             database=database_choice(str(settings["database"] or "") or None))
            stack.callback(server.stop)
            server.start(timeout=float(str(settings["timeout"])))
            state: dict[str, object] = {"pid": os.getpid(), "label_studio_pid": server.process.pid
                                        if server.process else None, "port": server.port, "url": server.url,
                                        "workers": settings.get("workers")}
            gateway = None
            if manifest:
                gateway = GatewayProcesses(manifest=Path(str(manifest)), ls_url=server.url, token=server.token,
                                           folder=data_dir / GATEWAY_FOLDER,
                                           port=gateway_port if isinstance(gateway_port, int) else None)
                stack.callback(gateway.stop)
                gateway.start()
                state.update(gateway_url=gateway.url, gateway_pids=gateway.pids(), gateway_manifest=str(manifest))
            write_text_atomic(data_dir / STATE_FILE, json.dumps(state) + "\n")
            stack.callback(lambda: (data_dir / STATE_FILE).unlink(missing_ok=True))
            outlive_parent()
            if os.getppid() != starter:  # ls start died before the line above: stop, as if it had been in time
                return 1
            _report(out, state)
            out.close()
            children = {"Label Studio": server.process}
            if gateway is not None:
                children.update(nginx=gateway.nginx.process, authoriser=gateway.authoriser.process)
            print(f"posthoc keeper: {_keep(children)} exited; stopping the rest", file=sys.stderr, flush=True)
            return 1
        except PosthocInputError as exc:
            _report(out, {"error": str(exc), "kind": "input"})
            return 2
        except PosthocServiceError as exc:
            _report(out, {"error": str(exc), "kind": "service"})
            return 3
        except KeyboardInterrupt:
            return 0


def main(argv: list[str]) -> int:
    """Run the keeper: the pipe to ``ls start`` is kept apart, and anything printed goes to the keeper's log."""
    out = os.fdopen(os.dup(1), "w")
    os.dup2(2, 1)
    return keep(json.loads(argv[1]), out)


if __name__ == "__main__":
    sys.exit(main(sys.argv))
