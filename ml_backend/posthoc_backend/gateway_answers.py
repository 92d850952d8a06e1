"""What the study gateway answers itself (issue 47): the calls of Label Studio's pages whose true answer is not a
worker's to see, and the worker's annotation and draft writes, read and checked before they go on.

When :func:`posthoc.labelstudio.gateway_rules.decide` allows a request with an ``answer``
(:data:`~posthoc.labelstudio.gateway_rules.ANSWERS`), the authoriser's ``/authorise`` says so to nginx
(``X-Posthoc-Via: gateway``) and nginx proxies the request itself, body and all, to ``ANSWER_PREFIX + its raw
URI`` on the authoriser (:func:`posthoc.labelstudio.gateway_nginx.nginx_config`). There the request is decided
again from its own method, URI and headers (nothing nginx added is trusted beyond what it proxies) and answered:

* ``ml``: ``[]`` (no ML backend: the labelling page then shows its predictions as they are);
* ``projects``: Label Studio's page of projects (``count``, ``next``, ``previous``, ``results``) holding the
  worker's own project alone, as the admin reads it;
* ``tips``: ``{}`` (no live tips, as an air-gapped Label Studio without its 404);
* ``users``: the worker alone, the fields of Label Studio's ``UserSerializer`` from their own whoami
  (:data:`USER_FIELDS`; the organisation's creator's e-mail blanked);
* ``stream``: ``302`` to the worker's labelling stream (:func:`stream_url`), for the Home and projects pages;
* ``body``: the body checked (:func:`posthoc.labelstudio.gateway_body.body_refusal`; ``400`` naming the field),
  then forwarded to Label Studio with the same bytes and the same headers (hop-by-hop ones aside), its answer
  returned as it came (``Set-Cookie`` included).

Every answer carries ``X-Posthoc-Gateway: answered`` (a body forwarded: ``checked``), so tests and logs tell
them from Label Studio's.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from typing import Protocol

from flask import Flask, Response, jsonify, request

from posthoc.errors import PosthocServiceError
from posthoc.http import ServiceSession, TransportFailure
from posthoc.labelstudio.client import LabelStudioClient
from posthoc.labelstudio.gateway_body import body_refusal
from posthoc.labelstudio.gateway_cookie import SessionRead, read_session
from posthoc.labelstudio.gateway_lookup import SessionUser
from posthoc.labelstudio.gateway_nginx import ANSWER_PREFIX
from posthoc.labelstudio.gateway_rules import Caller, Decision, Lookup

logger = logging.getLogger("posthoc_backend.gateway")
#: the fields of a user as Label Studio 1.23's ``UserSerializer`` lists them (``users/serializers.py``)
USER_FIELDS = ("id", "first_name", "last_name", "username", "email", "last_activity", "custom_hotkeys", "avatar",
               "initials", "phone", "active_organization", "active_organization_meta", "allow_newsletters",
               "date_joined")
#: headers of one connection, not of the request: never forwarded either way
HOP_BY_HOP = frozenset({"connection", "keep-alive", "proxy-authenticate", "proxy-authorization", "te", "trailer",
                        "transfer-encoding", "upgrade", "content-length", "content-encoding", "accept-encoding"})
#: how long Label Studio may take over a forwarded write (as nginx's ``proxy_read_timeout``)
FORWARD_SECONDS = 300.0


def stream_url(project_id: int) -> str:
    """The worker's labelling stream: the page Label Studio's "Label All Tasks" opens.

    Examples
    --------
    >>> stream_url(7)
    '/projects/7/data?labeling=1'
    """
    return f"/projects/{project_id}/data?labeling=1"


def own_user(record: Mapping[str, object]) -> dict[str, object]:
    """A user as ``GET /api/users`` lists them, from their own whoami answer: :data:`USER_FIELDS` only, the
    organisation's creator's e-mail blanked (another member's).

    Examples
    --------
    >>> own_user({"id": 3, "email": "w@x", "permissions": ["a"], "active_organization_meta": {"title": "T",
    ...           "email": "admin@x"}})
    {'id': 3, 'email': 'w@x', 'active_organization_meta': {'title': 'T', 'email': ''}}
    """
    user = {name: record[name] for name in USER_FIELDS if name in record}
    meta = user.get("active_organization_meta")
    if isinstance(meta, Mapping):
        user["active_organization_meta"] = {**meta, "email": ""}
    return user


def _answered(response: Response, how: str = "answered") -> Response:
    response.headers["X-Posthoc-Gateway"] = how
    return response


def _refused(status: int, reason: str, **extra: str) -> tuple[Response, int]:
    return _answered(jsonify(detail="refused by the study gateway", reason=reason, **extra)), status


class Authority(Protocol):
    """What the answers need of :class:`posthoc_backend.gateway.Authority` (which imports this module)."""

    url: str
    client: LabelStudioClient
    lookup: Lookup

    def user_of(self, session: SessionRead) -> SessionUser | None: ...

    def decide(self, method: str, uri: str, headers: Mapping[str, str], *,
               host: str = "") -> tuple[Decision, Caller]: ...


class Answers:
    """The gateway's own answers for one :class:`~posthoc_backend.gateway.Authority`."""

    def __init__(self, authority: Authority) -> None:
        self.authority = authority
        self.label_studio = ServiceSession(authority.url.rstrip("/"))

    def projects(self, caller: Caller, page: str) -> Response:
        project = self.authority.client.request("GET", f"/api/projects/{caller.project_id}/")
        results = [project] if page in ("", "1") else []
        return _answered(jsonify(count=1, next=None, previous=None, results=results))

    def users(self) -> Response | tuple[Response, int]:
        user = self.authority.user_of(read_session(request.headers.get("Cookie", "")))
        if user is None:
            return _refused(401, "not logged in")
        return _answered(jsonify([own_user(user.record)]))

    def forward(self, uri: str, caller: Caller) -> Response | tuple[Response, int]:
        body = request.get_data(cache=False)
        assert caller.project_id is not None
        refusal = body_refusal(body, project=caller.project_id, lookup=self.authority.lookup)
        if refusal is not None:
            logger.warning("refused a body of %s %s: %s", request.method, uri.partition("?")[0], refusal.message())
            return _refused(400, refusal.message(), field=refusal.field)
        headers = [(k, v) for k, v in request.headers.items() if k.lower() not in HOP_BY_HOP]
        try:
            status, answer_headers, content = self.label_studio.relay(
                request.method, uri, headers=[*headers, ("Accept-Encoding", "identity")], content=body,
                timeout=FORWARD_SECONDS)
        except TransportFailure as exc:
            return _refused(502, f"Label Studio did not answer ({exc})")
        kept = [(name, value) for name, value in answer_headers if name.lower() not in HOP_BY_HOP]
        return _answered(Response(content, status=status, headers=kept), "checked")

    def answer(self, decision: Decision, caller: Caller, uri: str) -> Response | tuple[Response, int]:
        if not decision.allowed or not decision.answer or caller.project_id is None:
            return _refused(403, decision.reason if not decision.allowed else "not a request the gateway answers")
        kind = decision.answer
        if kind == "stream":
            return _answered(Response(status=302, headers={"Location": stream_url(caller.project_id)}))
        if kind == "ml":
            return _answered(jsonify([]))
        if kind == "tips":
            return _answered(jsonify({}))
        if kind == "users":
            return self.users()
        if kind == "projects":
            return self.projects(caller, request.args.get("page", ""))
        return self.forward(uri, caller)


def raw_uri(prefix: str = ANSWER_PREFIX) -> str:
    """The request's raw URI (as the server received it: gunicorn's ``RAW_URI``, werkzeug's ``REQUEST_URI``)
    without ``prefix``."""
    raw = str(request.environ.get("RAW_URI") or request.environ.get("REQUEST_URI") or request.full_path)
    return raw[len(prefix):] if raw.startswith(prefix) else raw


def register_answers(app: Flask, authority: Authority) -> None:
    """Add the gateway's answers (``ANSWER_PREFIX/<the original raw URI>``, any method) to the authoriser's app."""
    answers = Answers(authority)
    methods = ["GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"]

    @app.route(f"{ANSWER_PREFIX}/", methods=methods, defaults={"rest": ""})
    @app.route(f"{ANSWER_PREFIX}/<path:rest>", methods=methods)
    def answer(rest: str) -> Response | tuple[Response, int]:
        uri = raw_uri()
        headers = {key.lower(): value for key, value in request.headers.items()}
        try:
            decision, caller = authority.decide(request.method, uri, headers, host=request.headers.get("Host", ""))
            return answers.answer(decision, caller, uri)
        except PosthocServiceError as exc:
            return _refused(503, str(exc))
