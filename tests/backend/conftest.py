"""Fixtures of the ML backend tests: the sample study's manifest, the real label config, the app."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pandas as pd
import pytest
from flask import Flask
from flask.testing import FlaskClient

from posthoc.paths import label_config
from posthoc.predictors.linker import AliasTable
from posthoc.study.plan.manifest import Manifest
from posthoc_backend.app import create_app


@pytest.fixture(scope="session")
def manifest_path(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The sample corpus planned as a study (GT, E2E, REL; control tasks on) and written as a manifest."""
    from posthoc.sample import sample_corpus
    from posthoc.study.plan.config import sample_study_config
    from posthoc.study.plan.design import plan_study

    corpus = sample_corpus()
    plan = plan_study(corpus.documents, corpus.mentions, sample_study_config())
    path = tmp_path_factory.mktemp("backend-study") / "sample.manifest.sqlite"
    Manifest.create(path, plan).close()
    return path


@pytest.fixture(scope="session")
def manifest(manifest_path: Path) -> Manifest:
    return Manifest.open(manifest_path)


@pytest.fixture(scope="session")
def sample_mentions() -> pd.DataFrame:
    from posthoc.sample import sample_corpus

    return sample_corpus().mentions


@pytest.fixture(scope="session")
def config() -> str:
    return label_config("entity_verification")


@pytest.fixture
def make_client(manifest: Manifest, tmp_path: Path) -> Callable[..., FlaskClient]:
    """Factory: a Flask test client of an app over the sample manifest (options of create_app)."""

    def make(**options: Any) -> FlaskClient:
        options.setdefault("events_db", tmp_path / "events.sqlite3")
        app: Flask = create_app(options.pop("manifest", manifest), **options)
        return app.test_client()

    return make


@pytest.fixture
def client(make_client: Callable[..., FlaskClient]) -> FlaskClient:
    return make_client()


@pytest.fixture
def live_client(make_client: Callable[..., FlaskClient], sample_mentions: pd.DataFrame) -> FlaskClient:
    return make_client(alias_table=AliasTable.from_mentions([sample_mentions]))
