"""Choosing a predictor by name: the built-ins, or a label-studio-ml-style class by import path.

``--predictor NAME`` (``posthoc predict``, ``posthoc backend serve``) is one of

``manifest``    the stored outputs (the backend: the study manifest only, no live predictions; ``posthoc
                predict``: a system's output file given with ``--source``);
``dictionary``  the baseline alias-table linker (``--alias-file``, repeatable);
``rel``         REL's HTTP API at ``--url`` (:mod:`posthoc.predictors.rel`);
``nif``         a NIF web-service annotator at ``--url``, called as GERBIL does (:mod:`.nif`);
``spacy``       an installed spaCy pipeline, ``--spacy-model`` (a package name or a folder) (:mod:`.spacy_linker`);
``package.module:Class``  a class shaped like ``label_studio_ml.model.LabelStudioMLBase``, built as
                ``Class(label_config=<config>)`` and called as ``predict(tasks, context=None)``.

:class:`PredictorSpec` holds the choice and its settings; it travels to gunicorn workers through the
environment (:meth:`PredictorSpec.to_env` / :meth:`PredictorSpec.from_env`).
"""

from __future__ import annotations

import importlib
import os
import re
from collections.abc import Mapping
from dataclasses import dataclass, field, fields
from typing import Any, Final

from posthoc.errors import PosthocInputError
from posthoc.predictors.base import LinkerModel, PredictModel, TextLinker

BUILT_IN: Final = ("manifest", "dictionary", "rel", "nif", "spacy")
_CLASS_PATH = re.compile(r"^[A-Za-z_][\w]*(?:\.[A-Za-z_]\w*)*:[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)*$")
ENV_PREFIX: Final = "POSTHOC_PREDICTOR"


def load_class(path: str) -> type:
    """The class named ``package.module:Class``; :class:`PosthocInputError` if it cannot be imported."""
    if not _CLASS_PATH.match(path):
        raise PosthocInputError(f"--predictor {path!r}: not a built-in ({', '.join(BUILT_IN)}) nor an import path "
                                "package.module:Class")
    module_name, attribute = path.split(":")
    try:
        target: Any = importlib.import_module(module_name)
    except ImportError as exc:
        raise PosthocInputError(f"--predictor {path}: cannot import {module_name} ({type(exc).__name__}: {exc}); "
                                "is it installed or on PYTHONPATH?") from None
    for part in attribute.split("."):
        target = getattr(target, part, None)
        if target is None:
            raise PosthocInputError(f"--predictor {path}: {module_name} has no {attribute}")
    if not isinstance(target, type) or not callable(getattr(target, "predict", None)):
        raise PosthocInputError(f"--predictor {path}: not a class with a predict(tasks, context=None, **kwargs) "
                                "method (a label-studio-ml model class)")
    return target


@dataclass(frozen=True)
class PredictorSpec:
    """A predictor and its settings (see the module docstring; defaults are what a user gets without flags).

    ``timeout`` / ``retries``: per HTTP request of ``rel`` and ``nif``; ``max_chars``: REL's text limit per
    request; ``concurrency``: requests in flight; ``nif_offsets``: ``auto | codepoints | utf16``.
    """

    name: str = "manifest"
    url: str | None = None
    alias_files: tuple[str, ...] = ()
    case_insensitive: bool = False
    spacy_model: str | None = None
    source: str | None = None
    source_system: str | None = None
    timeout: float = 30.0
    retries: int = 2
    max_chars: int = 5000
    concurrency: int = 2
    nif_offsets: str = "auto"
    _documents: object = field(default=None, compare=False, repr=False)

    @property
    def is_class(self) -> bool:
        return self.name not in BUILT_IN

    @property
    def display_name(self) -> str:
        """The name used as the default system name: the built-in name, or the class name."""
        return self.name.rsplit(":", 1)[-1] if self.is_class else self.name

    def check(self, *, backend: bool = False) -> None:
        """:class:`PosthocInputError` naming the missing or wrong option."""
        if self.is_class:
            load_class(self.name)
            return
        if self.name in ("rel", "nif") and (not self.url or not self.url.startswith(("http://", "https://"))):
                raise PosthocInputError(f"--predictor {self.name} needs --url http(s)://HOST:PORT/PATH of the "
                                    "service" + (f", got a {self.url.split(':', 1)[0]!r} URL" if self.url else ""))
        if self.name == "dictionary" and not self.alias_files:
            raise PosthocInputError("--predictor dictionary needs --alias-file (a mentions file; repeatable)")
        if self.name == "spacy" and not self.spacy_model:
            raise PosthocInputError("--predictor spacy needs --spacy-model (an installed pipeline, e.g. "
                                    "en_core_web_sm, or a folder written by nlp.to_disk)")
        if self.name == "manifest" and not backend and not self.source:
            raise PosthocInputError("--predictor manifest needs --source (a system's output file on this corpus)")
        if self.nif_offsets not in ("auto", "codepoints", "utf16"):
            raise PosthocInputError(f"--nif-offsets {self.nif_offsets!r}: give auto, codepoints or utf16")
        if self.timeout <= 0 or self.retries < 0 or self.max_chars < 1 or self.concurrency < 1:
            raise PosthocInputError("--timeout must be > 0, --retries >= 0, --max-chars and --concurrency >= 1")

    def linker(self) -> TextLinker | None:
        """The built-in linker (``None`` for a class, and for ``manifest`` in the backend without a source)."""
        self.check(backend=self.source is None)
        if self.name == "dictionary":
            from posthoc.predictors.linker import AliasTable, DictionaryLinker, frames_from_files
            from posthoc.predictors.stored import DictionaryTextLinker

            table = AliasTable.from_mentions(frames_from_files(list(self.alias_files)),
                                             case_sensitive=not self.case_insensitive)
            return DictionaryTextLinker(DictionaryLinker(table))
        if self.name == "rel":
            from posthoc.predictors.rel import RELLinker

            return RELLinker(str(self.url), timeout=self.timeout, retries=self.retries, max_chars=self.max_chars,
                             concurrency=self.concurrency)
        if self.name == "nif":
            from posthoc.predictors.nif import NIFLinker

            return NIFLinker(str(self.url), timeout=self.timeout, retries=self.retries,
                             offsets=self.nif_offsets, concurrency=self.concurrency)  # type: ignore[arg-type]
        if self.name == "spacy":
            from posthoc.predictors.spacy_linker import SpacyLinker

            return SpacyLinker(str(self.spacy_model))
        if self.name == "manifest" and self.source:
            from posthoc.predictors.stored import StoredOutputs

            return StoredOutputs(self.source, system=self.source_system, documents=self._documents)
        return None

    def to_env(self) -> dict[str, str]:
        """``POSTHOC_PREDICTOR_*`` variables carrying this spec (for gunicorn workers)."""
        env: dict[str, str] = {}
        for item in fields(self):
            if item.name.startswith("_"):
                continue
            value = getattr(self, item.name)
            if value is None or value == () or value is False:
                continue
            key = ENV_PREFIX if item.name == "name" else f"{ENV_PREFIX}_{item.name.upper()}"
            env[key] = os.pathsep.join(value) if isinstance(value, tuple) else ("1" if value is True else str(value))
        return env

    @classmethod
    def from_env(cls, env: Mapping[str, str]) -> PredictorSpec | None:
        """The spec in ``env`` (``None`` when ``POSTHOC_PREDICTOR`` is unset)."""
        name = env.get(ENV_PREFIX)
        if not name:
            return None
        values: dict[str, Any] = {"name": name}
        for item in fields(cls):
            key = f"{ENV_PREFIX}_{item.name.upper()}"
            if item.name.startswith("_") or item.name == "name" or key not in env:
                continue
            raw = env[key]
            if item.name == "alias_files":
                values[item.name] = tuple(p for p in raw.split(os.pathsep) if p)
            elif item.name == "case_insensitive":
                values[item.name] = raw in {"1", "true", "yes"}
            elif item.name in ("timeout",):
                values[item.name] = float(raw)
            elif item.name in ("retries", "max_chars", "concurrency"):
                values[item.name] = int(raw)
            else:
                values[item.name] = raw
        return cls(**values)


class ModelFactory:
    """The live model for a label config: built-ins share one linker; a class gets one instance a config."""

    def __init__(self, spec: PredictorSpec | None = None, *, linker: TextLinker | None = None,
                 model_version: str) -> None:
        self.spec = spec
        self.linker = linker if linker is not None else (spec.linker() if spec is not None else None)
        self.model_class = load_class(spec.name) if spec is not None and spec.is_class else None
        self.model_version = model_version
        self._models: dict[str, PredictModel] = {}

    @property
    def name(self) -> str:
        if self.spec is not None:
            return self.spec.display_name
        return getattr(self.linker, "name", "predictor")

    @property
    def live(self) -> bool:
        return self.linker is not None or self.model_class is not None

    def model(self, label_config: str) -> PredictModel:
        """The model answering tasks of projects with ``label_config`` (built once, then reused)."""
        model = self._models.get(label_config)
        if model is None:
            if self.model_class is not None:
                try:
                    model = self.model_class(label_config=label_config)
                except Exception as exc:
                    raise PosthocInputError(f"predictor {self.spec.name if self.spec else ''}: could not be built "
                                            f"with label_config= ({type(exc).__name__}: {exc})") from exc
            elif self.linker is not None:
                model = LinkerModel(self.linker, label_config=label_config, model_version=self.model_version)
            else:
                raise PosthocInputError("no live predictor is configured")
            if len(self._models) >= 16:
                self._models.pop(next(iter(self._models)))
            self._models[label_config] = model
        return model
