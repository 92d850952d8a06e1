"""What one request may reach through the study gateway (issue 23): a pure decision, knowing Label Studio's URLs
but not studies.

Label Studio Community has no roles: every member reads, exports and deletes every project. The gateway (nginx
``auth_request``, see :mod:`posthoc_backend.gateway`) asks :func:`decide` about every request before it reaches
Label Studio. The caller is one of four :class:`Role`:

* ``OWNER`` (the study owner, Label Studio's admin): everything, path tricks excepted;
* ``WORKER`` (a study's annotator, with their one project and its task ids): the calls the labelling stream makes,
  recorded from the real UI in chromium (``tests/gateway/worker_calls.json``), on their own project only;
* ``OUTSIDER`` (a valid session of an account that is in no study) and ``ANONYMOUS`` (no valid session): the
  login and logout pages, sign-up with an invite link, and static files.

Everyone's request is refused first when it is not plain: a method outside :data:`METHODS` (exact spelling), a
method override header (:data:`OVERRIDE_HEADERS`), a URI that is not a plain absolute path (``..`` or ``.``
segments, ``//``, a backslash, an encoded ``/`` ``\\`` ``.`` or NUL, double encoding, control characters, a
fragment). A worker's path must be plain ASCII (letters, digits, ``/ _ . - ~``), and anyone's but the owner's
query too (``, = & %`` besides; percent-encoding only of a comma, or in the login page's ``next``); it may
name each parameter once, and every id it carries (``project``, ``task``, a Data Manager ``view`` / ``tabID``, an
annotation or a draft in the path) must be of their project: task ids from the caller, the others from
:class:`Lookup` (the authoriser's cached Label Studio look-ups).

An ``Authorization`` or ``X-Api-Key`` header (an API token, :data:`CREDENTIAL_HEADERS`) is refused for all but the
owner: the gateway knows callers by their session, and Label Studio would know them by the token. A worker's write
must come from a page of the gateway (:func:`foreign_origin`: its ``Origin``, else ``Referer``, names
:attr:`GatewayRequest.host`), since Label Studio 1.23 checks no CSRF token. Some allowed calls are answered by the
gateway itself (:data:`ANSWERS`, :attr:`Decision.answer`): what Label Studio would answer there is another
member's or of no use to a worker. What the rules cannot see: request bodies (``auth_request`` forwards none; the
annotation and draft writes a worker makes are therefore read by the authoriser, :data:`BODY_RETARGETS`) and
Label Studio's answers. docs/gateway.md and docs/security.md say what follows from that.
"""

from __future__ import annotations

import enum
import functools
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Protocol
from urllib.parse import parse_qsl, unquote, urlsplit

#: methods Label Studio's UI and API use; anything else (``TRACE``, ``CONNECT``, ``get``, ``PROPFIND``) is refused
METHODS = frozenset({"GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"})
#: headers some frameworks read as "the real method": refused whatever their value
OVERRIDE_HEADERS = ("x-http-method-override", "x-http-method", "x-method-override", "x-original-method-override")
#: encodings of ``/``, ``\\``, ``.``, NUL and ``%`` itself, refused anywhere in a path
_ENCODED_TRICKS = re.compile(r"%(2f|5c|2e|00|25)", re.IGNORECASE)
_WORKER_PATH = re.compile(r"[A-Za-z0-9/_.~-]+")
_QUERY = re.compile(r"[A-Za-z0-9/_.~=&,%-]*")
_ENCODED_COMMA = re.compile(r"%2c", re.IGNORECASE)
_ID_DIGITS = "[1-9][0-9]{0,17}"
#: static files the pages load, for every caller (a path below one of these, made of plain characters)
STATIC_PREFIXES = ("/static/", "/react-app/", "/label-studio-frontend/")
#: headers Label Studio 1.23 reads as a credential (``core.middleware`` turns ``X-Api-Key`` into
#: ``Authorization: Token``): the owner's alone; annotators are known by their session
CREDENTIAL_HEADERS = ("authorization", "x-api-key")
#: methods that change something: a worker's must come from a page of the gateway (Label Studio 1.23 disables
#: Django's CSRF checks for every view, ``core.middleware.DisableCSRF``)
WRITE_METHODS = frozenset({"POST", "PUT", "PATCH", "DELETE"})
#: Data Manager actions the labelling stream posts (``POST /api/dm/actions?id=...``)
STREAM_ACTIONS = frozenset({"next_task"})


class Role(enum.Enum):
    """Who the caller is, as the authoriser established it from their session."""

    OWNER = "owner"
    WORKER = "worker"
    OUTSIDER = "outsider"
    ANONYMOUS = "anonymous"


@dataclass(frozen=True)
class Caller:
    """The caller: a role and, for a worker, their project and its task ids."""

    role: Role
    project_id: int | None = None
    task_ids: frozenset[int] = field(default_factory=frozenset)


@dataclass(frozen=True)
class GatewayRequest:
    """One request as nginx saw it: ``method`` and the raw ``uri`` (``$request_uri``: path and query, undecoded),
    ``headers`` with lower-case names."""

    method: str
    uri: str
    headers: Mapping[str, str] = field(default_factory=dict)
    #: the gateway's own host as the browser named it (nginx's ``$http_host``): a worker's write must come from
    #: a page of it (``Origin``, else ``Referer``)
    host: str = ""


#: what the gateway answers itself instead of Label Studio (:attr:`Decision.answer`): the labelling page's calls
#: whose true answer is another member's or nothing a worker needs (the ML backends of their project, every
#: project, live tips, every member of the organisation), the Home page (the worker's stream instead), and the
#: writes whose body is checked first (:mod:`posthoc.labelstudio.gateway_body`) then forwarded unchanged
ANSWERS = frozenset({"ml", "projects", "tips", "users", "stream", "body"})


@dataclass(frozen=True)
class Decision:
    """Allowed or not, with the reason (shown in the 403 answer and the authoriser's log); an allowed request
    with an ``answer`` (one of :data:`ANSWERS`) is answered by the gateway itself, not passed to Label Studio as
    it is."""

    allowed: bool
    reason: str
    answer: str = ""

    @property
    def passes_unread(self) -> bool:
        """Whether Label Studio gets the request as it is, without the gateway answering or reading its body."""
        return self.allowed and not self.answer


class Lookup(Protocol):
    """The project an annotation, draft or Data Manager view belongs to (``None``: no such object)."""

    def project_of(self, kind: str, object_id: int) -> int | None: ...


def allow(reason: str) -> Decision:
    return Decision(True, reason)


def deny(reason: str) -> Decision:
    return Decision(False, reason)


def answer(kind: str, reason: str) -> Decision:
    """Allowed, answered by the gateway (``kind``: one of :data:`ANSWERS`)."""
    assert kind in ANSWERS, kind
    return Decision(True, reason, kind)


@dataclass(frozen=True)
class Route:
    """A call the labelling stream makes: a path pattern (``{project}``, ``{task}``, ``{annotation}``,
    ``{draft}``; an optional trailing slash), its methods, the query parameters it may carry and those it must."""

    pattern: str
    methods: frozenset[str]
    query: frozenset[str] = frozenset()
    required: frozenset[str] = frozenset()
    #: what the gateway answers instead of Label Studio (:data:`ANSWERS`), per method (``""``: passed)
    answers: tuple[tuple[str, str], ...] = ()

    def match(self, path: str) -> dict[str, int] | None:
        """The ids the path names (``{"task": 12}``), or ``None`` when it is not this route's path."""
        found = _route_regex(self.pattern).fullmatch(path)
        return None if found is None else {name: int(value) for name, value in found.groupdict().items()}


@functools.cache
def _route_regex(pattern: str) -> re.Pattern[str]:
    """``pattern`` as a regex: each ``{name}`` a canonical decimal id named ``name``, then an optional ``/``."""
    regex = re.sub(r"\\\{(project|task|annotation|draft)\\\}", lambda m: f"(?P<{m.group(1)}>{_ID_DIGITS})",
                   re.escape(pattern))
    return re.compile(regex + "/?")


def _route(pattern: str, methods: str, query: str = "", *, answers: str = "") -> Route:
    """A :class:`Route`; in ``query`` a name ending in ``!`` is required; ``answers``: ``METHOD=kind`` pairs (or a
    bare kind for every method) the gateway answers itself."""
    names = query.split()
    kinds = tuple((m, k) for m, _, k in (pair.rpartition("=") for pair in answers.split()))
    return Route(pattern, frozenset(methods.split()), frozenset(n.rstrip("!") for n in names),
                 frozenset(n.rstrip("!") for n in names if n.endswith("!")), kinds)


#: the worker's calls, from ``tests/gateway/worker_calls.json`` (recorded) and the issue's list (the project, its
#: next task, the task, its annotations and drafts, whoami)
WORKER_ROUTES = (
    _route("/", "GET HEAD", answers="stream"),
    _route("/projects", "GET HEAD", "page page_size", answers="stream"),
    _route("/projects/{project}/data", "GET HEAD", "labeling tab task"),
    _route("/api/current-user/whoami", "GET HEAD"),
    _route("/api/version", "GET HEAD"),
    _route("/api/projects/{project}", "GET HEAD", "include"),
    _route("/api/projects/{project}/next", "GET HEAD"),
    _route("/api/projects/{project}/label-stream-history", "GET HEAD", "project"),
    _route("/api/dm/columns", "GET HEAD", "project!"),
    _route("/api/dm/project", "GET HEAD", "project! include interaction"),
    _route("/api/dm/views", "GET HEAD", "project!"),
    _route("/api/dm/actions", "POST", "id! project! tabID"),
    _route("/api/label_links", "GET HEAD", "project! expand"),
    _route("/api/users", "GET HEAD", "project!", answers="users"),
    _route("/api/ml", "GET HEAD", "project!", answers="ml"),
    _route("/api/projects", "GET HEAD", "page page_size include ordering search filter", answers="projects"),
    _route("/heidi-tips", "GET HEAD", answers="tips"),
    _route("/api/tasks", "GET HEAD", "page page_size project! view fields"),
    _route("/api/tasks/{task}", "GET HEAD", "project"),
    _route("/api/tasks/{task}/annotations", "GET HEAD POST", "project", answers="POST=body"),
    _route("/api/tasks/{task}/drafts", "GET HEAD POST", "project", answers="POST=body"),
    _route("/api/annotations/{annotation}", "GET HEAD", "project taskID"),  # no PATCH / PUT: see BODY_RETARGETS
    _route("/api/drafts/{draft}", "GET HEAD PATCH", "project", answers="PATCH=body"),
)

#: Label Studio 1.23 moves an annotation to the task (and project) a ``PATCH /api/annotations/{id}/`` body names
#: (measured: ``tests/gateway/test_gateway_live.py``). A worker's annotation and draft bodies therefore reach
#: Label Studio only through the authoriser, which reads them and refuses any field the labelling UI does not set
#: (:mod:`posthoc.labelstudio.gateway_body`): Submit (``POST /api/tasks/{task}/annotations``), a draft's first
#: save and its updates (``PATCH /api/drafts/{draft}`` of their own). Updating a submitted annotation stays refused.
BODY_RETARGETS = ("/api/annotations/{annotation}",)

#: pages everyone reaches (logging in and out); sign-up only with the organisation's invite ``token``
PUBLIC_ROUTES = (
    _route("/user/login", "GET HEAD POST", "next"),
    _route("/user/logout", "GET HEAD"),
    _route("/logout", "GET HEAD"),
    _route("/favicon.ico", "GET HEAD"),
    _route("/sw.js", "GET HEAD"),  # Label Studio's service worker, registered by every page
)
SIGNUP = _route("/user/signup", "GET HEAD POST", "token next")


def path_trick(path: str) -> str | None:
    """Why ``path`` (raw, undecoded) is not a plain absolute path, or ``None`` when it is."""
    if not path.startswith("/"):
        return "the path is not absolute"
    if "//" in path:
        return "the path holds an empty segment (//)"
    if "\\" in path:
        return "the path holds a backslash"
    if _ENCODED_TRICKS.search(path):
        return "the path holds an encoded slash, backslash, dot, NUL or percent sign"
    decoded = unquote(path, errors="strict")
    if any(ord(ch) < 0x20 or ord(ch) == 0x7F for ch in decoded) or any(ch.isspace() for ch in decoded):
        return "the path holds a control character or a space"
    if any(segment in (".", "..") for segment in decoded.split("/")):
        return "the path holds a . or .. segment"
    return None


def split_uri(uri: str) -> tuple[str, str] | str:
    """``(path, query)`` of a raw request URI, or the reason it is refused."""
    if "#" in uri:
        return "the URI holds a fragment"
    if any(ord(ch) < 0x21 or ord(ch) >= 0x7F for ch in uri):
        return "the URI holds a space, a control or a non-ASCII character"
    path, _, query = uri.partition("?")
    try:
        trick = path_trick(path)
    except UnicodeDecodeError:
        return "the path is not UTF-8 once decoded"
    return (path, query) if trick is None else trick


def _query_ids(params: dict[str, str], caller: Caller, lookup: Lookup) -> str | None:
    """Why a parameter of the worker's query names another project's object, or ``None``."""
    own = caller.project_id
    for name, value in params.items():
        number = int(value) if re.fullmatch(_ID_DIGITS, value) else None
        if name == "project" and number != own:
            return f"query project={value!r} is not the worker's project"
        if name in ("task", "taskID") and number not in caller.task_ids:
            return f"query {name}={value!r} is not a task of the worker's project"
        if name in ("view", "tabID") and (number is None or lookup.project_of("view", number) != own):
            return f"query {name}={value!r} is not a view of the worker's project"
        if name == "id" and value not in STREAM_ACTIONS:
            return f"query id={value!r} is not an action of the labelling stream"
    return None


def _path_ids(ids: dict[str, int], caller: Caller, lookup: Lookup) -> str | None:
    """Why an id of the worker's path names another project's object, or ``None``."""
    for kind, number in ids.items():
        if kind == "project" and number != caller.project_id:
            return f"project {number} is not the worker's project"
        if kind == "task" and number not in caller.task_ids:
            return f"task {number} is not a task of the worker's project"
        if kind in ("annotation", "draft") and lookup.project_of(kind, number) != caller.project_id:
            return f"{kind} {number} is not of the worker's project"
    return None


def _plain_query(query: str) -> dict[str, str] | str:
    """The query's parameters (each named once, in plain characters: percent-encoding only in ``next``, the page
    after logging in), or the reason it is refused."""
    if _QUERY.fullmatch(query) is None:
        return "the query holds characters other than letters, digits and _ . ~ = & , / % -"
    query = _ENCODED_COMMA.sub(",", query)  # the UI writes include=a%2Cb
    if any("%" in pair and not pair.startswith("next=") for pair in query.split("&")):
        return "percent-encoding (but of a comma) in a query parameter other than next"
    try:
        pairs = parse_qsl(query, keep_blank_values=True, strict_parsing=bool(query), errors="strict")
    except (ValueError, UnicodeDecodeError):
        return "the query is not plain name=value pairs"
    params = dict(pairs)
    if len(params) != len(pairs):
        return "a query parameter is given twice"
    return params


def foreign_origin(request: GatewayRequest) -> str | None:
    """Why a write does not come from a page of the gateway itself (``None``: it does): its ``Origin`` (else its
    ``Referer``) must name the gateway's own host (``request.host``); a write with neither is refused too."""
    headers = {key.lower(): value for key, value in request.headers.items()}
    origin = headers.get("origin")
    name, source = ("Origin", origin) if origin is not None else ("Referer", headers.get("referer"))
    if source is None:
        return "a write without an Origin or a Referer header (cross-site request forgery is refused)"
    parts = urlsplit(source.strip())
    if not request.host or parts.scheme not in ("http", "https") or parts.netloc.lower() != request.host.lower():
        return f"a write whose {name} is not a page of the gateway (cross-site request forgery is refused)"
    return None


def _is_static(path: str) -> bool:
    return path.startswith(STATIC_PREFIXES) and _WORKER_PATH.fullmatch(path) is not None


def _public(method: str, path: str, params: dict[str, str]) -> Decision | None:
    """The decision for the pages everyone may reach, or ``None`` when ``path`` is not one of them."""
    if _is_static(path):
        return allow("a static file") if method in ("GET", "HEAD") else deny(f"{method} on a static file")
    if SIGNUP.match(path) is not None:
        if method in SIGNUP.methods and params.get("token") and set(params) <= SIGNUP.query:
            return allow("sign-up with an invite link")
        return deny("sign-up without the invite link is off")
    for route in PUBLIC_ROUTES:
        if route.match(path) is not None:
            if method in route.methods and set(params) <= route.query:
                return allow(f"{method} {route.pattern}")
            return deny(f"{method} {path} with query {sorted(params)} is not allowed")
    return None


def _worker(method: str, path: str, params: dict[str, str], caller: Caller, lookup: Lookup) -> Decision:
    for route in WORKER_ROUTES:
        ids = route.match(path)
        if ids is None:
            continue
        if method not in route.methods:
            return deny(f"{method} {route.pattern} is not a call of the labelling stream")
        unexpected = set(params) - route.query
        if unexpected:
            return deny(f"query parameters {sorted(unexpected)} are not used by {route.pattern}")
        if not route.required <= set(params):
            return deny(f"{route.pattern} without {sorted(route.required - set(params))} is not of one project")
        reason = _path_ids(ids, caller, lookup) or _query_ids(params, caller, lookup)
        if reason:
            return deny(reason)
        kind = dict(route.answers).get(method, dict(route.answers).get("", ""))
        if kind:
            return answer(kind, f"{method} {route.pattern}: answered by the gateway ({kind})")
        return allow(f"{method} {route.pattern} of the worker's project")
    return deny(f"{path} is not a call of the labelling stream")


def decide(request: GatewayRequest, caller: Caller, lookup: Lookup) -> Decision:
    """Allow or deny ``request`` for ``caller`` (see the module docstring); never raises on any input."""
    method = request.method
    if method not in METHODS:
        return deny(f"method {method[:20]!r} is not allowed")
    overrides = [name for name in OVERRIDE_HEADERS if name in {key.lower() for key in request.headers}]
    if overrides:
        return deny(f"method override header {overrides[0]} is refused")
    parts = split_uri(request.uri)
    if isinstance(parts, str):
        return deny(parts)
    path, query = parts
    if caller.role is Role.OWNER:
        return allow("the study owner")
    credentials = sorted({key.lower() for key in request.headers} & set(CREDENTIAL_HEADERS))
    if credentials:
        return deny(f"a {credentials[0]} header is the owner's: annotators use their session")
    params = _plain_query(query)
    if isinstance(params, str):
        return deny(params)
    public = _public(method, path, params)
    if public is not None:
        return public
    if caller.role is not Role.WORKER or caller.project_id is None:
        return deny("not logged in" if caller.role is Role.ANONYMOUS else "this account is in no study")
    if _WORKER_PATH.fullmatch(path) is None:
        return deny("a worker's path is plain ASCII letters, digits and / _ . - ~")
    if method in WRITE_METHODS:
        foreign = foreign_origin(request)
        if foreign is not None:
            return deny(foreign)
    return _worker(method, path, params, caller, lookup)
