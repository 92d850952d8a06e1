"""No server outlives what started it: SIGKILL, SIGTERM, and SIGINT inherited as ignored (issue: process hygiene).

Faults injected for real: a parent SIGKILL-ed while its child server runs; ``posthoc demo`` SIGKILL-ed while
serving; ``posthoc demo`` started with SIGINT ignored (as ``nohup`` or a background job in a non-interactive shell
leaves it) and then sent SIGINT; and SIGTERM.
"""

from __future__ import annotations

import os
import re
import signal
import socket
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from lsfixtures import copy_template

POSTHOC = [sys.executable, "-m", "posthoc.cli.main"]


def _pid_alive(pid: int) -> bool:
    try:
        status = Path(f"/proc/{pid}/status").read_text()
    except OSError:
        return False
    return "\nState:\tZ" not in status


def _closed(url: str) -> bool:
    host, port = url.removeprefix("http://").split(":")
    with socket.socket() as probe:
        return probe.connect_ex((host, int(port))) != 0


def _processes_with(marker: str) -> list[int]:
    """Live processes whose environment holds ``marker`` (``NAME=value``)."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            if marker.encode() in (entry / "environ").read_bytes().split(b"\0") and _pid_alive(int(entry.name)):
                found.append(int(entry.name))
        except OSError:
            continue
    return found


def _wait_until(condition, timeout: float) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if condition():
            return True
        time.sleep(0.2)
    return condition()


def test_a_child_started_with_die_with_parent_dies_when_its_parent_is_killed(tmp_path: Path) -> None:
    pid_file = tmp_path / "child.pid"
    parent_code = textwrap.dedent(f"""
        import subprocess, sys, time
        from posthoc.processes import die_with_parent
        child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(300)"],
                                 start_new_session=True, preexec_fn=die_with_parent())
        open({str(pid_file)!r}, "w").write(str(child.pid))
        time.sleep(300)
    """)
    parent = subprocess.Popen([sys.executable, "-c", parent_code])
    try:
        assert _wait_until(pid_file.exists, 30)
        child = int(pid_file.read_text())
        assert _pid_alive(child)
        parent.kill()  # SIGKILL: the parent runs no clean-up at all
        parent.wait(timeout=10)
        assert _wait_until(lambda: not _pid_alive(child), 10), "the child outlived its SIGKILL-ed parent"
    finally:
        parent.kill()


def test_without_die_with_parent_the_child_would_survive(tmp_path: Path) -> None:
    """The control: the same parent without the death signal leaves its child running (so the test above
    measures the death signal, not something else)."""
    pid_file = tmp_path / "child.pid"
    parent_code = textwrap.dedent(f"""
        import subprocess, sys, time
        child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(300)"], start_new_session=True)
        open({str(pid_file)!r}, "w").write(str(child.pid))
        time.sleep(300)
    """)
    parent = subprocess.Popen([sys.executable, "-c", parent_code])
    child = None
    try:
        assert _wait_until(pid_file.exists, 30)
        child = int(pid_file.read_text())
        parent.kill()
        parent.wait(timeout=10)
        time.sleep(2)
        assert _pid_alive(child)
    finally:
        parent.kill()
        if child is not None and _pid_alive(child):
            os.kill(child, signal.SIGKILL)


def _start_demo(out: Path, marker: str, *, ignore_sigint: bool = False) -> tuple[subprocess.Popen[str], str, str]:
    env = dict(os.environ, POSTHOC_DEMO_MARK=marker)

    def ignore() -> None:
        signal.signal(signal.SIGINT, signal.SIG_IGN)

    process = subprocess.Popen([*POSTHOC, "demo", "--out", str(out), "--no-progress"],
                               stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=env,
                               preexec_fn=ignore if ignore_sigint else None)
    lines = []
    assert process.stdout is not None
    for line in process.stdout:
        lines.append(line)
        if line.startswith("Serving"):
            break
    text = "".join(lines)
    assert process.poll() is None, text[-3000:]
    ls_url = re.search(r"Label Studio: (http://127\.0\.0\.1:\d+)", text).group(1)
    backend_url = re.search(r"ML backend:\s+(http://127\.0\.0\.1:\d+)", text).group(1)
    assert not _closed(ls_url) and not _closed(backend_url)
    return process, ls_url, backend_url


@pytest.fixture(scope="module")
def demo_dir(ls_template: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One demo folder for the module (a migrated data dir copied in); later demos rerun on it (no-op setup)."""
    out = tmp_path_factory.mktemp("hygiene") / "demo"
    copy_template(ls_template, out / "labelstudio")
    return out


@pytest.mark.labelstudio
@pytest.mark.slow
def test_a_sigkilled_serving_demo_leaves_no_server_answering(demo_dir: Path) -> None:
    out = demo_dir
    marker = f"demo-{os.getpid()}-kill"
    process, ls_url, backend_url = _start_demo(out, marker)
    try:
        assert len(_processes_with(f"POSTHOC_DEMO_MARK={marker}")) >= 3  # the demo, Label Studio, the backend
        process.kill()  # SIGKILL: the demo's finally blocks never run
        process.wait(timeout=10)
        time.sleep(10)
        assert _closed(ls_url), "Label Studio still answers 10 s after the demo was SIGKILL-ed"
        assert _closed(backend_url), "the ML backend still answers 10 s after the demo was SIGKILL-ed"
        assert _processes_with(f"POSTHOC_DEMO_MARK={marker}") == []
    finally:
        process.kill()
        for pid in _processes_with(f"POSTHOC_DEMO_MARK={marker}"):
            os.kill(pid, signal.SIGKILL)


@pytest.mark.labelstudio
@pytest.mark.slow
@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM], ids=["sigint-inherited-ignored", "sigterm"])
def test_a_demo_stops_on_sigint_inherited_as_ignored_and_on_sigterm(demo_dir: Path, sig: signal.Signals) -> None:
    out = demo_dir
    marker = f"demo-{os.getpid()}-{sig.name}"
    process, ls_url, backend_url = _start_demo(out, marker, ignore_sigint=sig == signal.SIGINT)
    try:
        process.send_signal(sig)
        rest, _ = process.communicate(timeout=60)
        assert process.returncode is not None
        assert "Stopping" in rest
        assert _closed(ls_url) and _closed(backend_url)
        assert _wait_until(lambda: _processes_with(f"POSTHOC_DEMO_MARK={marker}") == [], 10)
    finally:
        process.kill()
        for pid in _processes_with(f"POSTHOC_DEMO_MARK={marker}"):
            os.kill(pid, signal.SIGKILL)
