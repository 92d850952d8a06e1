"""The Flask 3 app speaking Label Studio's ML backend protocol.

Endpoints (Label Studio 1.23 calls all of them; docs/label-studio-1.23.md):

``GET /health``
    ``{"status": "UP", "model_class", "model_version"}``; open even when a secret is set.
``POST /setup``
    ``{"model_version": "posthoc-v1"}``: the same version ``/predict`` puts on every prediction,
    so Label Studio never re-predicts a task it already pre-filled (no duplicates).
``GET /versions``
    ``{"versions": ["posthoc-v1"]}``.
``POST /predict``
    ``{"results": [...], "model_version"}`` one element per task (see :mod:`posthoc_backend.predictor`).
``POST /webhook``
    appends annotation events to the event store's inbox and answers at once (:mod:`posthoc.study.live.events`:
    Label Studio sends the webhook inside the annotator's Submit, so no database work is done here).

Bad requests get a 4xx JSON ``{"error", "field"}``; every HTTP error is JSON, never an HTML page.
The model version is neutral and no score is sent: annotators cannot tell which system (or the
ground truth) produced a pre-filled region (paper 000's blind verification).
"""

from __future__ import annotations

import logging
import os
from pathlib import Path
from typing import Any, cast

from flask import Flask, Response, jsonify, request
from werkzeug.exceptions import HTTPException

from posthoc.errors import PosthocInputError
from posthoc.labelstudio.label_config import region_tags
from posthoc.labelstudio.records import WebhookPayload, webhook_action
from posthoc.predictors.linker import AliasTable, DictionaryLinker
from posthoc.predictors.registry import ModelFactory, PredictorSpec
from posthoc.study.live.events import EventStore
from posthoc.study.plan.index import ManifestIndex, ManifestLike
from posthoc_backend.auth import OPEN_ENDPOINTS, authorised, webhook_token
from posthoc_backend.live import DEFAULT_BATCH_SIZE, DEFAULT_BUDGET
from posthoc_backend.predictor import Predictor
from posthoc_backend.protocol import MODEL_VERSION, RequestError, parse_predict, parse_setup, require_object
from posthoc_backend.reload import FileWatch, Reloading

logger = logging.getLogger("posthoc_backend")

#: Largest request body accepted. Label Studio sends every selected task, whole (text, key, the KB page
#: list), in one /predict request: about 1-2 kB a task, so 256 MB is well over 100,000 tasks.
MAX_BODY_BYTES = 256 * 1024 * 1024


def _default_config() -> str:
    from posthoc.paths import label_config

    return label_config("entity_verification")


def _json_body() -> object:
    body = request.get_json(silent=True)
    if body is None:
        raise RequestError("the request body must be JSON (Content-Type: application/json)", field=None)
    return body


def _error(status: int, message: str, field: str | None = None) -> tuple[Response, int]:
    return jsonify({"error": message, "field": field}), status


def read_manifest_index(path: Path) -> ManifestIndex:
    """The index of the manifest at ``path`` (opened, read, closed)."""
    from posthoc.study.plan.manifest import Manifest

    opened = Manifest.open(path)
    try:
        return ManifestIndex.from_manifest(opened)
    finally:
        opened.close()


def _manifest_index(manifest: ManifestLike | str | Path | None) -> ManifestIndex | Reloading[ManifestIndex] | None:
    """The index of the manifest served, ``None`` without one. From a path it follows the study's revisions: read
    again when ``posthoc study extend`` / ``reassign`` replaced the file (checked at most once a second; a file
    that cannot be read keeps the index read before: :mod:`posthoc_backend.reload`)."""
    if isinstance(manifest, str | Path):
        path = Path(manifest)
        return Reloading(lambda: read_manifest_index(path), FileWatch([path]), what=f"study manifest {path}")
    return ManifestIndex.from_manifest(manifest) if manifest is not None else None


def _live_model(predictor: PredictorSpec | ModelFactory | None, alias_table: AliasTable | None, *,
                model_version: str) -> ModelFactory | DictionaryLinker | None:
    """What pre-fills text in no manifest: the predictor named, else the dictionary linker, else nothing."""
    if isinstance(predictor, PredictorSpec):
        return ModelFactory(predictor, model_version=model_version) if predictor.name != "manifest" else None
    if predictor is not None:
        return predictor
    return DictionaryLinker(alias_table) if alias_table is not None else None


def create_app(manifest: ManifestLike | str | Path | None = None, *, alias_table: AliasTable | None = None,
               secret: str | None = None, events_db: str | Path | None = None,
               default_config: str | None = None, model_version: str = MODEL_VERSION,
               max_body_bytes: int = MAX_BODY_BYTES, predictor: PredictorSpec | ModelFactory | None = None,
               predict_budget: float = DEFAULT_BUDGET, live_batch_size: int = DEFAULT_BATCH_SIZE) -> Flask:
    """The backend app.

    ``manifest``: a :class:`posthoc.study.plan.manifest.Manifest` or its path (``None``: live mode only); from a
    path the backend follows the study's revisions without a restart (:func:`_manifest_index`).
    ``alias_table``: turns live mode on (text in no manifest is pre-filled by the dictionary linker).
    ``predictor``: the live predictor instead (a :class:`PredictorSpec`, e.g. ``PredictorSpec("rel",
    url=...)``, or a ready :class:`ModelFactory`); ``predict_budget`` (seconds of a request spent on live
    predictions) and ``live_batch_size``: see :mod:`posthoc_backend.live`.
    ``secret``: when set, every endpoint but ``/health`` needs it (basic auth password or bearer).
    ``events_db``: the SQLite event store of ``/webhook`` (``None``: webhooks are acknowledged, not kept).
    ``default_config``: the label config used when a request carries none (default
    ``label_configs/entity_verification.xml``). ``max_body_bytes``: larger requests get a 413.
    """
    served = Predictor(_manifest_index(manifest), _live_model(predictor, alias_table, model_version=model_version),
                       model_version=model_version, budget=predict_budget, batch_size=live_batch_size)
    store = EventStore(events_db) if events_db is not None else None
    fallback_config = default_config or _default_config()
    # warm what /setup needs before a worker takes a request: the SDK's label-config parser is imported lazily
    # (~0.5 s on a quiet machine, 4.3 s under load) and Label Studio gives /setup 3 s (ML_TIMEOUT_SETUP; issue 29)
    region_tags(fallback_config)

    app = Flask("posthoc_backend", static_folder=None)
    app.config["MAX_CONTENT_LENGTH"] = max_body_bytes
    app.json.sort_keys = False  # type: ignore[attr-defined]
    app.json.ensure_ascii = False  # type: ignore[attr-defined]
    app.extensions["posthoc_predictor"] = served
    app.extensions["posthoc_events"] = store
    _guard(app, secret)
    _protocol_routes(app, served, model_version=model_version, fallback_config=fallback_config)
    _webhook_route(app, store)
    return app


def _guard(app: Flask, secret: str | None) -> None:
    """The secret's check before every request but the open ones, and every error answered as JSON."""

    @app.before_request
    def check_secret() -> tuple[Response, int] | None:
        if not secret or request.endpoint in OPEN_ENDPOINTS:
            return None
        header = request.headers.get("Authorization")
        if authorised(header, secret):
            return None
        if request.endpoint == "webhook" and authorised(header, webhook_token(secret)):
            return None
        response, status = _error(401, "authentication required: basic auth with the backend secret as password, "
                                       "or Authorization: Bearer <secret>")
        response.headers["WWW-Authenticate"] = 'Basic realm="posthoc-backend"'
        return response, status

    @app.errorhandler(RequestError)
    def request_error(exc: RequestError) -> tuple[Response, int]:
        return jsonify(exc.body()), exc.status

    @app.errorhandler(PosthocInputError)
    def input_error(exc: PosthocInputError) -> tuple[Response, int]:
        return _error(422, str(exc))

    @app.errorhandler(HTTPException)
    def http_error(exc: HTTPException) -> tuple[Response, int]:
        return _error(exc.code or 500, exc.description or exc.name)

    @app.errorhandler(Exception)
    def unexpected_error(exc: Exception) -> tuple[Response, int]:
        logger.exception("unexpected error on %s", request.path)
        return _error(500, f"internal error ({type(exc).__name__}); see the backend's log")


def _protocol_routes(app: Flask, served: Predictor, *, model_version: str, fallback_config: str) -> None:
    """``/health``, ``/setup``, ``/versions`` and ``/predict`` (see the module docstring)."""

    @app.get("/health")
    def health() -> Response:
        return jsonify({"status": "UP", "model_class": "PosthocBackend", "model_version": model_version,
                        "live_mode": served.live, "manifest": served.manifest is not None})

    @app.post("/setup")
    def setup() -> Response:
        _, schema = parse_setup(_json_body())
        if schema is not None:
            try:
                region_tags(schema)
            except PosthocInputError as exc:
                raise RequestError(str(exc), field="schema", status=422) from exc
        return jsonify({"model_version": model_version})

    @app.get("/versions")
    def versions() -> Response:
        return jsonify({"versions": [model_version], "model_version": model_version})

    @app.post("/predict")
    def predict() -> tuple[Response, int]:
        envelope = parse_predict(_json_body())
        batch = served.predict(envelope.tasks, envelope.label_config or fallback_config, context=envelope.context)
        if batch.predicted == 0:
            first = batch.errors[0]
            logger.warning("/predict: none of %d tasks pre-filled; first: %s", len(batch.errors), first["error"])
            return jsonify({"error": first["error"], "field": first["field"], "errors": batch.errors,
                            "model_version": model_version}), int(first["status"])
        reply: dict[str, Any] = {"results": batch.results, "model_version": model_version}
        if batch.errors:
            reply["errors"] = batch.errors
            logger.warning("/predict: %d of %d tasks not pre-filled; first: %s", len(batch.errors),
                           len(batch.results), batch.errors[0]["error"])
        return jsonify(reply), 200


def _webhook_route(app: Flask, store: EventStore | None) -> None:
    """``/webhook``: Label Studio waits for this answer inside the annotator's Submit: check, append, return (no
    database work here; readers ingest the inbox, see :mod:`posthoc.study.live.events`)."""

    @app.post("/webhook")
    def webhook() -> Response:
        payload = cast(WebhookPayload, require_object(_json_body()))  # read through the accessors, checked there
        if store is None:
            from posthoc.study.live.events import event_rows

            event_rows(payload, received="")  # still checked: a bad payload is a 400 either way
        queued = store.append(payload) if store is not None else 0
        return jsonify({"status": "ok", "action": webhook_action(payload), "queued": queued,
                        "stored": store is not None})


def app_from_environment() -> Flask:
    """The app configured from the environment (for gunicorn: ``posthoc_backend.wsgi:app``).

    ``POSTHOC_MANIFEST`` (path), ``POSTHOC_ALIAS_FILES`` (mentions files separated by the OS path
    separator; turns live mode on), ``POSTHOC_BACKEND_SECRET``, ``POSTHOC_EVENTS_DB`` (path),
    ``POSTHOC_ALIAS_CASE_INSENSITIVE`` (``1`` to match aliases ignoring case), ``POSTHOC_PREDICTOR`` and
    ``POSTHOC_PREDICTOR_*`` (the live predictor, :meth:`PredictorSpec.to_env`), ``POSTHOC_PREDICT_BUDGET``
    (seconds).
    """
    from posthoc.predictors.linker import frames_from_files

    manifest = os.environ.get("POSTHOC_MANIFEST") or None
    alias_files = [p for p in os.environ.get("POSTHOC_ALIAS_FILES", "").split(os.pathsep) if p]
    table = None
    if alias_files:
        table = AliasTable.from_mentions(
            frames_from_files(alias_files),
            case_sensitive=os.environ.get("POSTHOC_ALIAS_CASE_INSENSITIVE", "") not in {"1", "true", "yes"},
        )
    spec = PredictorSpec.from_env(os.environ)
    if manifest is None and table is None and (spec is None or spec.name == "manifest"):
        raise PosthocInputError("set POSTHOC_MANIFEST (a study manifest) or POSTHOC_ALIAS_FILES / POSTHOC_PREDICTOR "
                                "(live mode), or both")
    budget = float(os.environ.get("POSTHOC_PREDICT_BUDGET") or DEFAULT_BUDGET)
    return create_app(manifest, alias_table=table, secret=os.environ.get("POSTHOC_BACKEND_SECRET") or None,
                      events_db=os.environ.get("POSTHOC_EVENTS_DB") or None, predictor=spec, predict_budget=budget)
