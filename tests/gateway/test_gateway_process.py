"""The authoriser dies with the process that started it (issue 47): Ctrl-C in a terminal sends ``SIGINT`` to the
serving demo's whole process group, and in 1 of 5 runs an authoriser process was still alive 15 s after the demo
had exited. Here a parent in a process group of its own starts the authoriser as the demo does
(:class:`posthoc.jobs.gateway_process.AuthoriserProcess`: ``posthoc gateway serve``, gunicorn, one worker), the
group gets ``SIGINT``, and neither gunicorn's master nor its worker may be alive 10 s later; five times over.
No Label Studio is needed: the authoriser asks it only when a request comes."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from posthoc.processes import pid_alive

pytestmark = pytest.mark.slow

PARENT = textwrap.dedent("""
    import json, sys, time
    from pathlib import Path
    from posthoc.jobs.gateway_process import AuthoriserProcess
    from posthoc.processes import restore_interrupt_signals

    restore_interrupt_signals()
    authoriser = AuthoriserProcess(manifest=Path(sys.argv[1]), ls_url="http://127.0.0.1:9", token="t" * 40,
                                   log=Path(sys.argv[2]))
    authoriser.start()
    master = authoriser.process.pid
    workers = Path(f"/proc/{master}/task/{master}/children").read_text().split()
    print(json.dumps({"master": master, "workers": [int(w) for w in workers]}), flush=True)
    try:
        while True:
            time.sleep(0.2)
    except KeyboardInterrupt:
        authoriser.stop()
""")


def children_of(pid: int) -> list[int]:
    try:
        return [int(c) for c in Path(f"/proc/{pid}/task/{pid}/children").read_text().split()]
    except OSError:
        return []


@pytest.mark.parametrize("run", range(5))
def test_the_authoriser_dies_with_its_parent_on_a_ctrl_c_to_the_group(tmp_path: Path, run: int) -> None:
    manifest = tmp_path / "study.sqlite"
    manifest.write_bytes(b"")  # the authoriser reads it on the first request only
    parent = subprocess.Popen([sys.executable, "-c", PARENT, str(manifest), str(tmp_path / "authoriser.log")],
                              stdout=subprocess.PIPE, text=True, start_new_session=True, env=os.environ.copy())
    try:
        assert parent.stdout is not None
        line = parent.stdout.readline()
        assert line, (tmp_path / "authoriser.log").read_text(errors="replace")[-800:]
        started = json.loads(line)
        processes = sorted({started["master"], *started["workers"], *children_of(started["master"])})
        assert len(set(processes)) >= 2, started  # gunicorn's master and its worker
        os.killpg(parent.pid, signal.SIGINT)  # what a terminal's Ctrl-C does
        parent.wait(timeout=60)
        deadline = time.monotonic() + 10
        while any(pid_alive(pid) for pid in processes) and time.monotonic() < deadline:
            time.sleep(0.1)
        alive = [pid for pid in processes if pid_alive(pid)]
        assert alive == [], (tmp_path / "authoriser.log").read_text(errors="replace")[-1500:]
    finally:
        if parent.poll() is None:
            os.killpg(parent.pid, signal.SIGKILL)
            parent.wait(timeout=30)
