"""Setup does not make Label Studio post every imported task to the backend's webhook (issue 11).

``POST /api/ml`` makes a project webhook for all actions, so a project connected before its import has Label
Studio serialise and post each import batch to ``<backend>/webhook`` (``TASKS_CREATED``). Setup connects every
project but the first (which it asks the model version through) after the import. Label Studio reaches the real
backend through a counting proxy here, so every call it makes to the backend is seen; afterwards the webhook of a
project connected late still carries an annotation to the backend.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

from faults.proxy import fault_proxy
from lsfixtures import run_backend, small_sample_manifest
from posthoc.jobs.setup import SetupOptions, SetupTarget, create_study
from posthoc.labelstudio.client import LabelStudioClient
from posthoc.study.plan.study import Study

pytestmark = [pytest.mark.labelstudio, pytest.mark.slow]


@contextmanager
def _study_behind_a_counting_proxy(ls_server: Any, tmp_path: Path, *, name: str, n_workers: int,
                                   webhook: bool = False) -> Iterator[tuple[Any, list[tuple[str, str]], str]]:
    """A study set up with the backend behind a proxy that records every call Label Studio makes to it: the setup,
    the calls (method, path; a live list) and the backend's URL as Label Studio has it."""
    manifest = small_sample_manifest(tmp_path / "manifest.sqlite", name=name, n_workers=n_workers)
    calls: list[tuple[str, str]] = []
    lock = threading.Lock()

    def record(method: str, path: str, n: int) -> None:
        with lock:
            calls.append((method, path.split("?")[0]))
        return None

    with run_backend(manifest.path) as backend_url, fault_proxy(backend_url, record) as (proxy_url, _):
        options = SetupOptions(accounts_file=tmp_path / "accounts.json", setup_file=tmp_path / "setup.json",
                               email_domain=f"{name}.posthoc.local", webhook=webhook)
        target = SetupTarget(url=ls_server.url, token=ls_server.token, backend_url=proxy_url)
        yield create_study(Study(manifest), target, options), calls, proxy_url


def test_only_the_first_project_is_imported_with_the_webhook_on(ls_server, tmp_path: Path) -> None:
    with _study_behind_a_counting_proxy(ls_server, tmp_path, name="whload", n_workers=5,
                                        webhook=True) as (setup, calls, proxy_url):  # the webhook is tested here
        hooks_during_setup = [c for c in calls if c == ("POST", "/webhook")]
        client = LabelStudioClient(ls_server.url, ls_server.token)
        for project in setup.projects:  # every project connected, with the webhook Label Studio made
            assert [b["url"] for b in client.ml_backends(project.project_id)] == [proxy_url]
            assert [h["url"] for h in client.webhooks(project.project_id)] == [f"{proxy_url}/webhook"]
        # the first project (one import batch here) was connected before its import; the other four after theirs
        assert 1 <= len(hooks_during_setup) < len(setup.projects), calls
        # a late-connected project's webhook still tells the backend of an annotation
        last = setup.projects[-1].project_id
        task = next(iter(client.tasks(last)))
        before = len(calls)
        client.post(f"/api/tasks/{task['id']}/annotations/", {"result": [], "lead_time": 1.0})
        assert ("POST", "/webhook") in calls[before:], calls[before:]


def test_by_default_label_studio_posts_nothing_to_the_backend_s_webhook(ls_server, tmp_path: Path) -> None:
    """The default study (no webhook, issue 24): the webhook Label Studio makes when the backend is added is removed
    at once (the first project's before its import; the others are connected after theirs), so neither the imports
    nor an annotator's Submit post anything to ``/webhook``; the backend is still connected and pre-fills."""
    with _study_behind_a_counting_proxy(ls_server, tmp_path, name="whdefault", n_workers=4) as (setup, calls,
                                                                                               proxy_url):
        client = LabelStudioClient(ls_server.url, ls_server.token)
        for project in setup.projects:
            assert [b["url"] for b in client.ml_backends(project.project_id)] == [proxy_url]
            assert client.webhooks(project.project_id) == []
        last = setup.projects[-1].project_id
        task = next(iter(client.tasks(last)))
        assert len(task["predictions"]) == 1
        client.post(f"/api/tasks/{task['id']}/annotations/", {"result": [], "lead_time": 1.0})
        assert ("POST", "/setup") in calls  # the proxy saw Label Studio's calls to the backend
        assert [c for c in calls if c[1] == "/webhook"] == [], calls
