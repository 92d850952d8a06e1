"""What a local Label Studio runs with: the ``label-studio`` command and the environment of its processes.

Label Studio runs on its database in a data directory, on loopback only, with the settings that keep it
off the network (no version check, no analytics, no Sentry). Facts behind each setting are in
``../shared/docs/label-studio-1.23.md``.

Local only: ``ML_BLOCK_LOCAL_IP=false`` and ``SSRF_PROTECTION_ENABLED=false`` let this Label Studio
call an ML backend on 127.0.0.1. They switch off Label Studio's protection against server-side
request forgery and are set here because the server listens on loopback and serves one machine.
Never use them for a shared deployment (run the backend on a routable address there instead).

Sign-up needs the organisation's invite link (:data:`ACCESS_ENV`): Label Studio 1.23 refuses a sign-up form whose
``token`` is not the organisation's when ``DISABLE_SIGNUP_WITHOUT_LINK`` is true (``users/views.py``,
``user_signup``; ``core/settings/base.py`` reads it with ``get_bool_env``, which also accepts the
``LABEL_STUDIO_`` prefix). ``posthoc study create`` signs its annotators up with that token
(:func:`posthoc.labelstudio.users.signup`), so nothing of this project needs the open form.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

from posthoc.errors import PosthocInputError, PosthocServiceError
from posthoc.labelstudio.credentials import Credentials
from posthoc.labelstudio.database import DatabaseSettings, read_database

#: Settings that keep Label Studio off the network and enable the legacy ``Token`` API scheme.
OFFLINE_ENV: dict[str, str] = {
    "LABEL_STUDIO_ENABLE_LEGACY_API_TOKEN": "true",
    "LATEST_VERSION_CHECK": "false",
    "COLLECT_ANALYTICS": "false",
    "SENTRY_DSN": "",
    "FRONTEND_SENTRY_DSN": "",
}
#: Only who holds the invite link (``/user/signup/?token=...``, the admin's ``GET /api/invite``) may sign up.
ACCESS_ENV: dict[str, str] = {
    "LABEL_STUDIO_DISABLE_SIGNUP_WITHOUT_LINK": "true",
}
#: Local-only: allow an ML backend / webhook receiver on 127.0.0.1 (switches off SSRF protection).
LOCAL_ML_ENV: dict[str, str] = {
    "ML_BLOCK_LOCAL_IP": "false",
    "SSRF_PROTECTION_ENABLED": "false",
}
#: How long Label Studio waits for the ML backend's ``/health`` and ``/setup`` when a project adds it (its defaults:
#: 1 s and 3 s, ``label_studio/ml/api_connector.py``). A backend worker's first answers under load took 2.3-4.8 s
#: before it warmed its parser (issue 29); these leave room for a busy machine. Set either in the environment to
#: choose another value (Label Studio also reads them with a ``LABEL_STUDIO_`` prefix).
ML_TIMEOUT_ENV: dict[str, str] = {
    "ML_TIMEOUT_HEALTH": "10",
    "ML_TIMEOUT_SETUP": "20",
}


#: How to install the Label Studio server: the ``server`` extra (``label-studio`` itself). The jobs that talk to a
#: server elsewhere (``study plan / create / status``, ``score``) need only label-studio-sdk, always installed.
SERVER_EXTRA_HINT = "pip install 'posthoc-review[server]' (from a clone: pip install -e '.[server]')"


def server_package_missing(what: str) -> PosthocInputError:
    """The one line (exit 2) for ``what`` (a command) on an install without the ``label-studio`` package."""
    return PosthocInputError(f"{what} needs the Label Studio server package (label-studio), which this install "
                             f"leaves out: {SERVER_EXTRA_HINT}")


def label_studio_version(what: str = "this command") -> str:
    """The installed ``label-studio`` version; :func:`server_package_missing` (exit 2) naming ``what`` when the
    distribution or its ``label_studio`` module is not installed (the lean install: the jobs alone)."""
    from importlib.metadata import PackageNotFoundError, version
    from importlib.util import find_spec

    try:
        installed = version("label-studio")
        module = find_spec("label_studio")
    except (PackageNotFoundError, ImportError, ValueError):
        raise server_package_missing(what) from None
    if module is None:
        raise server_package_missing(what)
    return installed


def label_studio_executable(what: str = "this command") -> str:
    """Path of the ``label-studio`` command (next to this Python first, then on PATH); exit 2 naming ``what``
    when the server package is not installed here."""
    label_studio_version(what)
    beside = Path(sys.executable).with_name("label-studio")
    if beside.is_file():
        return str(beside)
    found = shutil.which("label-studio")
    if not found:
        raise PosthocServiceError("the label-studio command is not on PATH although the package is installed: "
                                  f"put {Path(sys.executable).parent} on PATH")
    return found


def server_environment(data_dir: Path, credentials: Credentials, *, allow_local_ml: bool = True,
                       base: dict[str, str] | None = None, database: DatabaseSettings | None = None) -> dict[str, str]:
    """The environment for ``label-studio`` commands on ``data_dir`` (see the module docstring); the database
    is ``database``, else the one stored for the data dir (``database.json``), else SQLite."""
    env = dict(os.environ if base is None else base)
    (database or read_database(data_dir)).apply(env)
    env.update(OFFLINE_ENV)
    env.update(ACCESS_ENV)
    if allow_local_ml:
        env.update(LOCAL_ML_ENV)
    for name, seconds in ML_TIMEOUT_ENV.items():
        if name not in env and f"LABEL_STUDIO_{name}" not in env:
            env[name] = seconds
    env["LABEL_STUDIO_BASE_DATA_DIR"] = str(Path(data_dir).resolve())
    env["LABEL_STUDIO_USERNAME"] = credentials.username
    env["LABEL_STUDIO_PASSWORD"] = credentials.password
    env["LABEL_STUDIO_USER_TOKEN"] = credentials.token
    for stray in ("LABEL_STUDIO_PORT", "LABEL_STUDIO_HOST"):
        env.pop(stray, None)
    return env


def run_label_studio_command(data_dir: Path, credentials: Credentials, args: list[str], *,
                             timeout: float = 180) -> str:
    """Run a ``label-studio`` management command (``user``, ``reset_password``, ``export``) on ``data_dir``.

    It opens the same SQLite database as a running server; returns stdout. Raises
    PosthocServiceError with the tail of the output when the command fails.
    """
    env = server_environment(data_dir, credentials)
    # the management commands would otherwise (re)create the admin on every call
    for key in ("LABEL_STUDIO_USERNAME", "LABEL_STUDIO_PASSWORD", "LABEL_STUDIO_USER_TOKEN"):
        env.pop(key, None)
    executable = label_studio_executable(f"label-studio {args[0]} (on a local data dir)")
    done = subprocess.run([executable, *args], env=env, capture_output=True, text=True, timeout=timeout, check=False)
    if done.returncode != 0:
        tail = (done.stdout + done.stderr)[-2000:]
        raise PosthocServiceError(f"label-studio {args[0]} failed (exit {done.returncode}): {tail}")
    return done.stdout
