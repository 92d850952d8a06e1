"""Connecting the ML backend to study projects (Label Studio 1.23's ``/api/ml`` and the webhook it makes).

``POST /api/ml`` adds the backend (Label Studio calls its ``/health`` and ``/setup`` on the spot and
auto-creates a project webhook to ``<backend>/webhook`` for all actions: ``create_ml_webhook`` in Label Studio
1.23's ``ml/models.py``, unless the project has a webhook to that URL already). A study has no webhook by
default: open-source Label Studio sends it inside the annotator's Submit, +36.0 ms p50 / +40.0 ms p95 even to a
receiver that answers at once (``bench/results/study_scale_bench.txt``, (a)), so :class:`BackendLink` deletes it
again and progress is read from Label Studio's API. With ``webhook=True`` (``posthoc study create --webhook``)
the webhook is kept, or made again (``POST /api/webhooks/``, as Label Studio makes it) where a run without it
removed it. With a shared secret the backend is added with ``auth_method: BASIC_AUTH`` (the secret as password)
and the webhook gets ``Authorization: Bearer <webhook token>`` (:func:`webhook_token`, an HMAC of the secret:
webhook headers are readable by every member of the organisation in open-source Label Studio, so the secret
itself is never put there).

:class:`BackendLink` serves a whole study: one listing of the organisation's webhooks tells which projects have
the webhook (a rerun asks nothing per project where the setup record vouches for the backend), and the
backend's one neutral model version is asked once a run, when a project first needs it.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import logging
import re
import threading
import time
from dataclasses import dataclass
from typing import Any

from posthoc.errors import PosthocServiceError
from posthoc.http import TransportFailure, web_get_json
from posthoc.labelstudio import records as ls
from posthoc.labelstudio.client import LabelStudioClient

logger = logging.getLogger("posthoc")

#: Tries of ``POST /api/ml/`` when Label Studio's call to the backend timed out, and the backoff (s, times the try)
ADD_TRIES = 4
ADD_BACKOFF = 2.0
#: Seconds ``study create`` waits for the backend's first answer (``--backend-wait``)
BACKEND_WAIT = 60.0

#: The user name Label Studio sends with basic auth (not checked by the backend).
BASIC_AUTH_USER = "labelstudio"
BACKEND_TITLE = "posthoc pre-fill"


def webhook_token(secret: str) -> str:
    """The bearer token the backend's ``/webhook`` accepts for a shared ``secret`` (HMAC-SHA256, hex)."""
    return hmac.new(secret.encode("utf-8"), b"posthoc-backend webhook", hashlib.sha256).hexdigest()


@dataclass(frozen=True)
class Connection:
    """The Label Studio ML backend record and the id of the project webhook pointing at ``/webhook``."""

    ml_backend_id: int
    webhook_id: int | None


class BackendLink:
    """The ML backend at ``backend_url`` (as Label Studio reaches it) and the study's projects."""

    def __init__(self, client: LabelStudioClient, backend_url: str, secret: str | None = None, *,
                 title: str = BACKEND_TITLE, webhook: bool = False) -> None:
        """``webhook=False`` (the default): the webhook Label Studio makes for the backend is removed;
        ``webhook=True`` (``--webhook``): it is kept, or made where it is missing."""
        self.client = client
        self.webhook = webhook
        self.url = backend_url.rstrip("/")
        self.secret = secret
        self.title = title
        self._hooks: dict[int, list[dict[str, Any]]] | None = None
        self._version: str | None = None
        self._lock = threading.Lock()

    @property
    def header(self) -> dict[str, str] | None:
        return {"Authorization": f"Bearer {webhook_token(self.secret)}"} if self.secret else None

    def _webhooks(self) -> dict[int, list[dict[str, Any]]]:
        """The organisation's webhooks to our backend by project: one listing a run."""
        with self._lock:
            if self._hooks is None:
                found: dict[int, list[dict[str, Any]]] = {}
                for hook in self.client.request("GET", "/api/webhooks/") or []:
                    if str(hook.get("url", "")).rstrip("/") == f"{self.url}/webhook" and hook.get("project"):
                        found.setdefault(int(hook["project"]), []).append(hook)
                self._hooks = found
            return self._hooks

    def connected(self, project_id: int, *, recorded: bool = False) -> bool:
        """Whether the project is as this link wants it: the backend connected and the webhook there and authorised
        (``webhook=True``) or absent (``webhook=False``). The organisation's webhook listing (one call a run)
        answers the first; without a webhook, ``recorded`` (the setup record names this backend for the project,
        :meth:`posthoc.jobs.setup_record.SetupRecord.connected`) answers for the backend, else the project's ML
        backends are listed (one call)."""
        hooks = self._webhooks().get(project_id, [])
        if not self.webhook:
            return not hooks and (recorded or any(str(b.get("url", "")).rstrip("/") == self.url
                                                  for b in self.client.ml_backends(project_id)))
        return bool(hooks) and all(h.get("headers") == (self.header or h.get("headers")) for h in hooks)

    def connect(self, project_id: int, *, new: bool = False, find_webhook: bool = True) -> Connection:
        """Add the backend to the project (or give an existing one the secret), then remove its webhook
        (``webhook=False``) or keep it authorised, making it where it is missing (``webhook=True``).
        ``new``: the project has no ML backend yet (just created): it is added without listing first;
        ``find_webhook=False``: the webhook Label Studio just made for a backend added here without a secret is
        not looked up (``webhook_id`` is ``None``)."""
        auth: dict[str, Any] = {}
        if self.secret:
            auth = {"auth_method": "BASIC_AUTH", "basic_auth_user": BASIC_AUTH_USER, "basic_auth_pass": self.secret}
        there = [] if new else [b for b in self.client.ml_backends(project_id)
                                if str(b.get("url", "")).rstrip("/") == self.url]
        if there:
            backend_id = ls.int_id(there[0])
            if auth and there[0].get("auth_method") != "BASIC_AUTH":
                self.client.patch(f"/api/ml/{backend_id}", {"url": self.url, "project": project_id, **auth})
        else:
            backend_id = self._add(project_id, auth)
        if not self.webhook:
            self.remove_webhooks(project_id)
            return Connection(ml_backend_id=backend_id, webhook_id=None)
        hook_id = None
        for hook in self.client.webhooks(project_id) if self.secret or find_webhook or there else []:
            if str(hook.get("url", "")).rstrip("/") == f"{self.url}/webhook":
                hook_id = ls.int_id(hook)
                if self.header is not None and hook.get("headers") != self.header:
                    self.client.patch(f"/api/webhooks/{hook_id}/", {"headers": self.header})
        if hook_id is None and there:  # removed by a run without the webhook: made again, as Label Studio makes it
            hook_id = self.add_webhook(project_id)
        return Connection(ml_backend_id=backend_id, webhook_id=hook_id)

    def add_webhook(self, project_id: int) -> int:
        """``POST /api/webhooks/``: the project webhook Label Studio 1.23 makes when a backend is added
        (``send_payload``, ``send_for_all_actions``), with the derived token when there is a secret; its id."""
        body: dict[str, Any] = {"project": project_id, "url": f"{self.url}/webhook", "send_payload": True,
                                "send_for_all_actions": True, "is_active": True}
        if self.header is not None:
            body["headers"] = self.header
        return ls.int_id(self.client.post("/api/webhooks/", body))

    def _add(self, project_id: int, auth: dict[str, Any]) -> int:
        """``POST /api/ml/``: Label Studio calls the backend's ``/health`` (1 s) and ``/setup`` (3 s) inside it and
        answers 400 when either is late. A backend that is slow only now (a busy machine, a worker still starting)
        is asked again, :data:`ADD_TRIES` times in all, each retry logged; then the error quotes Label Studio's
        reason whole (:func:`backend_refusal`)."""
        payload = {"url": self.url, "project": project_id, "title": self.title, "is_interactive": False, **auth}
        for attempt in range(1, ADD_TRIES + 1):
            response = self.client.send("POST", "/api/ml/", json=payload)
            if response.status_code in (200, 201):
                return ls.int_id(response.json())
            reason = backend_refusal(response.text) if response.status_code == 400 else None
            if reason is None:
                raise self.client.refused("POST", "/api/ml/", response)
            if attempt == ADD_TRIES or not _timed_out(reason):
                raise PosthocServiceError(
                    f"Label Studio could not add the ML backend {self.url} to project {project_id}"
                    f"{f' ({attempt} tries)' if attempt > 1 else ''}: {reason}" + (
                        ". Label Studio waits ML_TIMEOUT_HEALTH / ML_TIMEOUT_SETUP seconds for it (1 / 3 by default;"
                        " `posthoc ls start` sets 10 / 20): on a busy machine set them higher in Label Studio's "
                        "environment, then rerun (nothing was added)" if _timed_out(reason) else
                        ". Check the backend's log; rerun when it is fixed (nothing was added)"))
            logger.warning("project %s: Label Studio's call to the ML backend timed out (%s); asking again (%d of "
                           "%d)", project_id, reason, attempt + 1, ADD_TRIES)
            time.sleep(ADD_BACKOFF * attempt)
        raise AssertionError("unreachable")

    def remove_webhooks(self, project_id: int) -> int:
        """Delete the project's webhooks to ``<backend>/webhook``; how many. Label Studio sends a webhook inside
        the annotator's Submit; without it Submit waits for no receiver (progress is then read from the API)."""
        hooks = [h for h in self.client.webhooks(project_id)
                 if str(h.get("url", "")).rstrip("/") == f"{self.url}/webhook" and h.get("project") == project_id]
        for hook in hooks:
            self.client.delete(f"/api/webhooks/{ls.int_id(hook)}/")
        return len(hooks)

    @property
    def known_version(self) -> str | None:
        """The backend's model version if a project of this run has asked it already, else None."""
        with self._lock:
            return self._version

    def model_version(self, project_id: int) -> str:
        """The backend's one neutral model version (``GET /api/ml/<id>/versions``, asked once a run)."""
        with self._lock:
            if self._version is None:
                backend = next((b for b in self.client.ml_backends(project_id)
                                if str(b.get("url", "")).rstrip("/") == self.url), None)
                if backend is None:
                    raise PosthocServiceError(f"project {project_id}: the ML backend at {self.url} is not connected")
                answer = self.client.get(f"/api/ml/{ls.int_id(backend)}/versions")
                versions = answer.get("versions", []) if isinstance(answer, dict) else []
                if len(versions) != 1:
                    raise PosthocServiceError(f"the ML backend at {self.url} reports versions {versions}; it must "
                                              "report exactly one neutral model version (see docs/backend.md)")
                self._version = str(versions[0])
            return self._version


def check_backend_health(backend_url: str, *, wait: float = BACKEND_WAIT, timeout: float = 30.0) -> None:
    """PosthocServiceError unless the ML backend answers ``GET /health`` from here (open without the secret:
    ``posthoc_backend.auth.OPEN_ENDPOINTS``) within ``wait`` seconds (asked every half second: a backend started
    in the background just before, as the README's study block does, takes a few seconds to answer). ``study
    create`` asks first, also on a rerun that has nothing to set up: the backend must be up for the study to run
    (Label Studio asks it for live predictions, and with ``--webhook`` sends it the webhook inside every Submit),
    and a rerun with it down would otherwise end with exit 0."""
    deadline = time.monotonic() + wait
    while True:
        try:
            answer = web_get_json(f"{backend_url.rstrip('/')}/health", timeout=timeout)
            break
        except TransportFailure as exc:
            if exc.status is not None or time.monotonic() >= deadline:
                waited = f" in {wait:g} s" if wait > 0 and exc.status is None else ""
                raise PosthocServiceError(f"the ML backend at {backend_url} does not answer /health{waited} ({exc}): "
                                          "start it (`posthoc backend serve --manifest MANIFEST --port PORT`) or fix "
                                          "--backend-url, then rerun") from None
            time.sleep(0.5)
    if not isinstance(answer, dict) or answer.get("status") != "UP":
        raise PosthocServiceError(f"{backend_url}/health answered {str(answer)[:200]!r}, not this project's ML "
                                  "backend (`posthoc backend serve`); fix --backend-url")


def backend_refusal(body: str) -> str | None:
    """Label Studio's reason for refusing an ML backend, from a 400 of ``POST /api/ml/`` (1.23:
    ``validation_errors`` of ``label_studio/ml/serializers.py``: "Successfully connected to URL but it doesn't look
    like a valid ML backend. Reason: ...", or "Can't connect to ML backend URL, health check failed ...
    Additional info: ..."), whole and on one line; ``None`` for any other answer."""
    try:
        answer = json.loads(body)
    except ValueError:
        return None
    errors = answer.get("validation_errors") if isinstance(answer, dict) else None
    messages = [str(m) for value in (errors or {}).values() for m in (value if isinstance(value, list) else [value])]
    found = next((m for m in messages if "ML backend" in m), None)
    if found is None:
        return None
    text = re.sub(r"<[^>]+>", "", found)
    cause = re.search(r"(?:Reason|Additional info): (.*?)(?:\.\s*Check the ML backend|$)", text, re.S)
    head = "its /setup failed" if "valid ML backend" in text else "its /health failed"
    return " ".join(f"{head}: {cause.group(1) if cause else text}".split())


def _timed_out(reason: str) -> bool:
    return "timed out" in reason.lower() or "timeout" in reason.lower()
