"""Choosing a predictor by name: the built-ins, or a label-studio-ml-style class by import path.

Every built-in is one entry of :data:`PREDICTORS` (a :class:`Predictor`: its name, what it is, the settings it
reads and needs, how it is built), and every setting one entry of :data:`SETTINGS` (a :class:`Setting`: its
spellings, help, type and default, free of click). ``posthoc predict`` and ``posthoc backend serve`` build their
predictor options from these two tables (``posthoc.cli.predictor_options``), so a new predictor is one entry here
beside its module. ``--predictor NAME`` is one of

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
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, fields
from typing import Any, Final, Literal

from posthoc.errors import PosthocInputError
from posthoc.predictors.base import LinkerModel, PredictModel, TextLinker

_CLASS_PATH = re.compile(r"^[A-Za-z_][\w]*(?:\.[A-Za-z_]\w*)*:[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)*$")
ENV_PREFIX: Final = "POSTHOC_PREDICTOR"
COMMANDS: Final = ("predict", "serve")
SettingKind = Literal["text", "url", "path", "float", "int", "flag", "choice"]


@dataclass(frozen=True)
class Setting:
    """One predictor setting as both commands take it, free of click.

    ``field``: the :class:`PredictorSpec` field it fills; ``flags``: its spellings, the first the documented one
    (every one accepted by both commands); ``older``: spellings ``posthoc predict`` accepted before the two
    commands shared one set, still accepted there (``--timeout`` is the backend's gunicorn timeout);
    ``kind``: ``text``, ``url`` (``http(s)://`` checked), ``path``, ``float``, ``int``, ``flag`` or ``choice``
    (one of ``choices``); ``low`` / ``high``: the range of a number; ``multiple``: repeatable (a tuple);
    ``default`` and ``serve_default`` (the backend's, when it differs: a live request has Label Studio's 100 s);
    ``needed``: the words after the flag in the error when a predictor needs it and it is missing;
    ``commands``: the commands that take it; ``serve_note``: help added in ``backend serve``.
    """

    field: str
    flags: tuple[str, ...]
    help: str
    kind: SettingKind = "text"
    default: object = None
    serve_default: object = None
    low: float | None = None
    high: float | None = None
    choices: tuple[str, ...] = ()
    multiple: bool = False
    older: tuple[str, ...] = ()
    needed: str = ""
    commands: tuple[str, ...] = COMMANDS
    serve_note: str = ""

    @property
    def flag(self) -> str:
        """The documented spelling."""
        return self.flags[0]

    def default_in(self, command: str) -> object:
        return self.serve_default if command == "serve" and self.serve_default is not None else self.default

    def spellings_in(self, command: str) -> tuple[str, ...]:
        return (*self.flags, *self.older) if command == "predict" else self.flags

    def help_in(self, command: str) -> str:
        return f"{self.help} {self.serve_note}" if command == "serve" and self.serve_note else self.help

    def parse(self, raw: str) -> object:
        """The value of this setting written as ``raw`` in the environment (:meth:`PredictorSpec.to_env`)."""
        if self.multiple:
            return tuple(p for p in raw.split(os.pathsep) if p)
        if self.kind == "flag":
            return raw in {"1", "true", "yes"}
        if self.kind in ("float", "int"):
            return float(raw) if self.kind == "float" else int(raw)
        return raw


_HTTP = "rel / nif:"
SETTINGS: Final = (
    Setting("source", ("--source",), "--predictor manifest: a system's stored output on this corpus (any format "
            "the readers know).", kind="path", needed="(a system's output file on this corpus)",
            commands=("predict",)),
    Setting("source_system", ("--source-system",), "--predictor manifest: the system to take from --source.",
            commands=("predict",)),
    Setting("alias_files", ("--alias-file",), "--predictor dictionary: a mentions file (CSV or Parquet with surface "
            "and link columns, or any format the readers know: JSONL, NIF, WNED, AIDA TSV, REL); repeatable.",
            kind="path", multiple=True, needed="(a mentions file; repeatable)",
            serve_note="Without --predictor it turns live mode on with the dictionary; without either, tasks "
                       "without a known key are refused."),
    Setting("case_insensitive", ("--case-insensitive",), "--predictor dictionary: match aliases ignoring case.",
            kind="flag", default=False),
    Setting("url", ("--url", "--predictor-url"), "The service of --predictor rel or nif, e.g. "
            "http://127.0.0.1:5555/ (REL) or the annotator's NIF endpoint.", kind="url",
            needed="http(s)://HOST:PORT/PATH of the service"),
    Setting("spacy_model", ("--spacy-model",), "--predictor spacy: an installed pipeline (en_core_web_sm) or a "
            "folder written by nlp.to_disk.", needed="(an installed pipeline, e.g. en_core_web_sm, or a folder "
            "written by nlp.to_disk)"),
    Setting("timeout", ("--predictor-timeout",), f"{_HTTP} seconds to wait for one answer.", kind="float",
            default=30.0, serve_default=20.0, low=0.1, older=("--timeout",)),
    Setting("retries", ("--predictor-retries",), f"{_HTTP} more attempts after a failed connection, a timeout, 429 "
            "or 5xx.", kind="int", default=2, serve_default=1, low=0, high=10, older=("--retries",)),
    Setting("max_chars", ("--max-chars",), "rel: longest text sent in one request; longer documents go in pieces "
            "(offsets mapped back).", kind="int", default=5000, low=1),
    Setting("concurrency", ("--concurrency",), f"{_HTTP} requests in flight at once.", kind="int", default=2,
            low=1, high=64),
    Setting("nif_offsets", ("--nif-offsets",), "nif: how the annotator counts offsets; auto tells code points from "
            "UTF-16 units (Java annotators) by nif:anchorOf, else by the spans' word boundaries.", kind="choice",
            default="auto", choices=("auto", "codepoints", "utf16")),
)
SETTING: Final = {setting.field: setting for setting in SETTINGS}


@dataclass(frozen=True)
class Predictor:
    """One built-in predictor: ``name`` (``--predictor NAME``), ``what`` it is (one line, the ``--predictor``
    help; ``serve_what`` in ``backend serve`` when it differs there), the :data:`SETTINGS` it reads (``settings``)
    and of those the ones it cannot run without (``needs``; ``serve_needs`` in the backend when they differ), and
    ``build``, its linker from a checked spec (``None``: no live predictions)."""

    name: str
    what: str
    build: Callable[[PredictorSpec], TextLinker | None]
    settings: tuple[str, ...] = ()
    needs: tuple[str, ...] = ()
    serve_needs: tuple[str, ...] | None = None
    serve_what: str = ""

    def needs_in(self, *, backend: bool) -> tuple[str, ...]:
        return self.serve_needs if backend and self.serve_needs is not None else self.needs

    def what_in(self, command: str) -> str:
        return self.serve_what if command == "serve" and self.serve_what else self.what


def _stored(spec: PredictorSpec) -> TextLinker | None:
    if not spec.source:
        return None  # the backend: the manifest alone
    from posthoc.predictors.stored import StoredOutputs

    return StoredOutputs(spec.source, system=spec.source_system, documents=spec._documents)


def _dictionary(spec: PredictorSpec) -> TextLinker:
    from posthoc.predictors.linker import AliasTable, DictionaryLinker, frames_from_files
    from posthoc.predictors.stored import DictionaryTextLinker

    table = AliasTable.from_mentions(frames_from_files(list(spec.alias_files)),
                                     case_sensitive=not spec.case_insensitive)
    return DictionaryTextLinker(DictionaryLinker(table))


def _rel(spec: PredictorSpec) -> TextLinker:
    from posthoc.predictors.rel import RELLinker

    return RELLinker(str(spec.url), timeout=spec.timeout, retries=spec.retries, max_chars=spec.max_chars,
                     concurrency=spec.concurrency)


def _nif(spec: PredictorSpec) -> TextLinker:
    from posthoc.predictors.nif import NIFLinker

    return NIFLinker(str(spec.url), timeout=spec.timeout, retries=spec.retries,
                     offsets=spec.nif_offsets, concurrency=spec.concurrency)  # type: ignore[arg-type]


def _spacy(spec: PredictorSpec) -> TextLinker:
    from posthoc.predictors.spacy_linker import SpacyLinker

    return SpacyLinker(str(spec.spacy_model))


_SERVICE: Final = ("url", "timeout", "retries", "concurrency")
PREDICTORS: Final = {entry.name: entry for entry in (
    Predictor("manifest", "a stored output, --source", _stored, ("source", "source_system"), needs=("source",),
              serve_needs=(), serve_what="the study manifest only, no live predictions"),
    Predictor("dictionary", "the baseline alias-table linker, --alias-file", _dictionary,
              ("alias_files", "case_insensitive"), needs=("alias_files",)),
    Predictor("rel", "REL's HTTP API, --url", _rel, (*_SERVICE, "max_chars"), needs=("url",)),
    Predictor("nif", "a NIF web-service annotator, --url", _nif, (*_SERVICE, "nif_offsets"), needs=("url",)),
    Predictor("spacy", "an installed spaCy pipeline, --spacy-model", _spacy, ("spacy_model",),
              needs=("spacy_model",)),
)}
BUILT_IN: Final = tuple(PREDICTORS)


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

    One field a :data:`SETTINGS` entry: ``timeout`` / ``retries``: per HTTP request of ``rel`` and ``nif``;
    ``max_chars``: REL's text limit per request; ``concurrency``: requests in flight; ``nif_offsets``:
    ``auto | codepoints | utf16``.
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
        return self.name not in PREDICTORS

    @property
    def display_name(self) -> str:
        """The name used as the default system name: the built-in name, or the class name."""
        return self.name.rsplit(":", 1)[-1] if self.is_class else self.name

    def check(self, *, backend: bool = False) -> None:
        """:class:`PosthocInputError` naming the missing or wrong option."""
        if self.is_class:
            load_class(self.name)
            return
        for name in PREDICTORS[self.name].needs_in(backend=backend):
            setting, value = SETTING[name], getattr(self, name)
            if not value or (setting.kind == "url" and not str(value).startswith(("http://", "https://"))):
                got = f", got a {str(value).split(':', 1)[0]!r} URL" if value and setting.kind == "url" else ""
                raise PosthocInputError(f"--predictor {self.name} needs {setting.flag} {setting.needed}{got}")
        if self.nif_offsets not in SETTING["nif_offsets"].choices:
            raise PosthocInputError(f"--nif-offsets {self.nif_offsets!r}: give auto, codepoints or utf16")
        if self.timeout <= 0 or self.retries < 0 or self.max_chars < 1 or self.concurrency < 1:
            raise PosthocInputError("--predictor-timeout must be > 0, --predictor-retries >= 0, --max-chars and "
                                    "--concurrency >= 1")

    def linker(self) -> TextLinker | None:
        """The built-in linker (``None`` for a class, and for ``manifest`` in the backend without a source)."""
        self.check(backend=self.source is None)
        return None if self.is_class else PREDICTORS[self.name].build(self)

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
        for setting in SETTINGS:
            key = f"{ENV_PREFIX}_{setting.field.upper()}"
            if key in env:
                values[setting.field] = setting.parse(env[key])
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
