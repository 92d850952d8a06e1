"""Shared fixtures. Label Studio fixtures live in ``lsfixtures.py`` (a real server, started per session)."""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import sys
import time
import types
import uuid
from pathlib import Path

import pytest

from servermarks import unmarked_server_tests

pytest_plugins = ["lsfixtures"]


def _this_folder_as_tests_package() -> None:
    """``tests`` is this folder, whatever is installed: ppi-python's wheel (the test extra, issue 46) puts a package
    of its own named ``tests`` in site-packages, and an installed regular package wins over this folder's namespace
    package, so ``from tests.eaglet.helpers import ...`` would look in ppi-python's."""
    package = types.ModuleType("tests")
    package.__path__ = [str(Path(__file__).resolve().parent)]
    sys.modules["tests"] = package


_this_folder_as_tests_package()

REPO_ROOT = Path(__file__).resolve().parents[1]
SHARED_DATA = REPO_ROOT.parent / "shared" / "data"


@pytest.fixture(scope="session")
def shared_data() -> Path:
    """``../shared/data``: real reference data; tests that need it skip when it is absent (a user's clone)."""
    if not SHARED_DATA.is_dir():
        pytest.skip("../shared/data is absent (it is only beside the project in CI and dev sessions)")
    return SHARED_DATA


@pytest.fixture(scope="session")
def nginx_binary() -> str:
    """nginx's path; a test that starts it carries ``@pytest.mark.nginx`` (``servermarks.py``)."""
    found = shutil.which("nginx") or ("/usr/sbin/nginx" if Path("/usr/sbin/nginx").is_file() else None)
    if found is None:
        pytest.skip("nginx is not installed (sudo apt-get install nginx)")
    return found


# -- PostgreSQL runs ---------------------------------------------------------------------------------------
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """With ``POSTHOC_TEST_DATABASE=postgresql`` only the tests on the shared ``ls_server`` run (again, on
    PostgreSQL); the rest ran on the SQLite pass (``scripts/test.sh`` runs both passes). A test that starts a
    server without its marker stops the run (``servermarks.py``)."""
    unmarked = unmarked_server_tests(items)
    if unmarked:
        raise pytest.UsageError("tests that start a server without its marker:\n  " + "\n  ".join(unmarked))
    if os.environ.get("POSTHOC_TEST_DATABASE", "sqlite") != "postgresql":
        return
    keep = [item for item in items if "ls_server" in getattr(item, "fixturenames", ())]
    dropped = [item for item in items if "ls_server" not in getattr(item, "fixturenames", ())]
    if dropped:
        config.hook.pytest_deselected(items=dropped)
    items[:] = keep


# -- no process left behind --------------------------------------------------------------------------------
#: every process this test run starts inherits this marker; at the end none of them may be alive
RUN_MARKER = "POSTHOC_TEST_RUN"
os.environ[RUN_MARKER] = f"{os.getpid()}-{uuid.uuid4().hex}"


def processes_of_this_run() -> list[tuple[int, str]]:
    """``(pid, command line)`` of live processes whose environment holds this run's marker (not this one)."""
    marker = f"{RUN_MARKER}={os.environ[RUN_MARKER]}".encode()
    own = {os.getpid(), os.getppid()}
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit() or int(entry.name) in own:
            continue
        try:
            environ = (entry / "environ").read_bytes()
            if marker not in environ.split(b"\0"):
                continue
            status = (entry / "status").read_text()
            if "\nState:\tZ" in status:
                continue  # a zombie: dead, only not reaped yet
            command = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode("utf-8", "replace").strip()
        except OSError:
            continue
        found.append((int(entry.name), command))
    return found


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    """Fail the run when a process it started (Label Studio, PostgreSQL, the backend, a demo) is still alive
    10 s after the last test; such processes are listed and then killed."""
    if not Path("/proc/self/environ").exists():
        return
    deadline = time.monotonic() + 10
    leftovers = processes_of_this_run()
    while leftovers and time.monotonic() < deadline:
        time.sleep(0.5)
        leftovers = processes_of_this_run()
    if not leftovers:
        return
    reporter = session.config.pluginmanager.get_plugin("terminalreporter")
    lines = [f"processes started by this test run are still alive after it ended: {len(leftovers)}"]
    lines += [f"  pid {pid}: {command[:200]}" for pid, command in leftovers]
    for line in lines:
        if reporter is not None:
            reporter.write_line(line, red=True)
        else:
            print(line)
    for pid, _ in leftovers:
        with contextlib.suppress(OSError):
            os.kill(pid, signal.SIGKILL)
    session.exitstatus = pytest.ExitCode.TESTS_FAILED
