"""No request, however malformed, gets a 500 or an HTML page (hypothesis-generated JSON bodies)."""

from __future__ import annotations

import json
from typing import Any

import pytest
from flask.testing import FlaskClient
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from posthoc.study.plan.manifest import Manifest
from posthoc_backend.app import create_app

_scalars = st.none() | st.booleans() | st.integers(-2**40, 2**40) | st.floats(allow_nan=False) | st.text(max_size=20)
_json = st.recursive(_scalars, lambda inner: st.lists(inner, max_size=4)
                     | st.dictionaries(st.text(max_size=8), inner, max_size=4), max_leaves=12)
_keys = st.sampled_from(["text", "task_key", "id", "data", "tasks", "label_config", "action", "annotation",
                         "annotations", "result", "schema", "project"])
_task = st.fixed_dictionaries({}, optional={
    "id": _json, "data": st.dictionaries(st.sampled_from(["text", "task_key"]), _json | st.text(max_size=30)) | _json,
})
_predict_body = st.fixed_dictionaries({"tasks": st.lists(_task | _json, max_size=4)},
                                      optional={"label_config": _json, "project": _json, "params": _json})
_webhook_body = st.fixed_dictionaries(
    {"action": st.sampled_from(["ANNOTATION_CREATED", "ANNOTATION_UPDATED", "ANNOTATIONS_DELETED", "OTHER"]) | _json},
    optional={"annotation": st.dictionaries(_keys, _json) | _json, "annotations": _json,
              "task": st.dictionaries(_keys, _json) | _json, "project": _json},
)


@pytest.fixture(scope="module")
def fuzz_client(manifest: Manifest, tmp_path_factory: pytest.TempPathFactory) -> FlaskClient:
    from posthoc.predictors.linker import AliasTable
    from posthoc.sample import sample_corpus

    table = AliasTable.from_mentions([sample_corpus().mentions])
    app = create_app(manifest, alias_table=table, events_db=tmp_path_factory.mktemp("fuzz") / "events.sqlite3")
    return app.test_client()


def _check(reply: Any) -> None:
    assert reply.status_code < 500, reply.get_data(as_text=True)[:300]
    assert reply.is_json
    body = reply.json
    assert isinstance(body, dict)
    if reply.status_code >= 400:
        assert isinstance(body.get("error"), str) and body["error"]


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(body=_json | _predict_body)
def test_predict_never_fails_with_500(fuzz_client: FlaskClient, body: Any) -> None:
    _check(fuzz_client.post("/predict", data=json.dumps(body), content_type="application/json"))


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(body=_json | _webhook_body)
def test_webhook_never_fails_with_500(fuzz_client: FlaskClient, body: Any) -> None:
    _check(fuzz_client.post("/webhook", data=json.dumps(body), content_type="application/json"))


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(body=_json | st.dictionaries(_keys, _json), raw=st.binary(max_size=40))
def test_setup_and_raw_bytes_never_fail_with_500(fuzz_client: FlaskClient, body: Any, raw: bytes) -> None:
    _check(fuzz_client.post("/setup", data=json.dumps(body), content_type="application/json"))
    _check(fuzz_client.post("/predict", data=raw, content_type="application/json"))
