"""The study configuration (``study.toml``) and reading its inputs into tables.

Example::

    [study]
    name = "sample"
    seed = 20260101
    k = 1                 # judgements per item (1 as in paper 000; 3 for an agreement sub-study)
    tasks_per_batch = 20  # tasks a batch (a HIT), the control task included
    max_chars = 300       # chunk length limit in code points
    n_workers = 12        # optional; default: one batch per worker (as many workers as batches)
    control_tasks = true  # one control task per batch

    [[inputs]]
    path = "gt.jsonl"     # relative to this file
    format = "jsonl"      # optional; the reader guesses from the file otherwise
    dataset = "demo"      # optional; the dataset name when the file does not carry one
    system = "GT"         # the ground truth is GT; other systems are named by their output

:func:`load_study_config` validates every field and raises :class:`PosthocInputError` naming the
file and key. Only this module and the CLI read files; :func:`posthoc.study.plan_study` takes tables.
"""

from __future__ import annotations

import json
import tomllib
from collections.abc import Mapping
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd

from posthoc.errors import PosthocInputError
from posthoc.study.plan.storage import file_sha256

_STUDY_KEYS = {"name", "seed", "k", "tasks_per_batch", "max_chars", "n_workers", "control_tasks"}
_INPUT_KEYS = {"path", "format", "dataset", "system"}


@dataclass(frozen=True)
class StudyInput:
    """One input file: a system's annotations (or the ground truth, ``system = "GT"``)."""

    path: Path
    system: str = "GT"
    format: str | None = None
    dataset: str | None = None
    #: the path as written in the config (stored in the manifest instead of the absolute path)
    path_as_written: str = ""
    #: SHA-256 of the file's bytes, filled by :func:`load_study_config`
    sha256: str | None = None
    #: whether the config wrote ``system =`` (then every system the file's lines name must be this one)
    named: bool = False


@dataclass(frozen=True)
class StudyConfig:
    """Settings of a study; see the module docstring for each field."""

    name: str
    seed: int
    k: int = 1
    tasks_per_batch: int = 20
    max_chars: int = 300
    n_workers: int | None = None
    control_tasks: bool = True
    inputs: tuple[StudyInput, ...] = field(default_factory=tuple)
    #: the toml file the config was read from, if any
    source: Path | None = None

    def __post_init__(self) -> None:
        where = f"study config {self.source}" if self.source else "study config"
        _check_int(self.seed, f"{where}: [study] seed", minimum=0)
        _check_int(self.k, f"{where}: [study] k", minimum=1)
        _check_int(self.max_chars, f"{where}: [study] max_chars", minimum=1)
        minimum_batch = 2 if self.control_tasks else 1
        _check_int(self.tasks_per_batch, f"{where}: [study] tasks_per_batch", minimum=minimum_batch)
        if self.n_workers is not None:
            _check_int(self.n_workers, f"{where}: [study] n_workers", minimum=1)
        if not isinstance(self.name, str) or not self.name.strip():
            raise PosthocInputError(f"{where}: [study] name must be a non-empty string")
        if not isinstance(self.control_tasks, bool):
            raise PosthocInputError(f"{where}: [study] control_tasks must be true or false")

    @property
    def real_tasks_per_batch(self) -> int:
        """Tasks of a batch that are real items (one slot goes to the control task when enabled)."""
        return self.tasks_per_batch - 1 if self.control_tasks else self.tasks_per_batch

    def as_record(self) -> dict[str, Any]:
        """A JSON-ready record of the settings and inputs (paths as written, hashes), for the manifest."""
        record = asdict(self)
        record.pop("source")
        record["inputs"] = [
            {"path": i.path_as_written or i.path.name, "system": i.system, "format": i.format,
             "dataset": i.dataset, "sha256": i.sha256}
            for i in self.inputs
        ]
        return record

    def to_json(self) -> str:
        """Canonical JSON of :meth:`as_record` (sorted keys), identical for identical configs."""
        return json.dumps(self.as_record(), sort_keys=True, ensure_ascii=False, separators=(",", ":"))


def _check_int(value: object, where: str, *, minimum: int) -> None:
    if isinstance(value, bool) or not isinstance(value, int) or value < minimum:
        raise PosthocInputError(f"{where} must be an integer >= {minimum}, got {value!r}")


def _optional_str(table: Mapping[str, Any], key: str, where: str) -> str | None:
    value = table.get(key)
    if value is not None and (not isinstance(value, str) or not value.strip()):
        raise PosthocInputError(f"{where} {key} must be a non-empty string, got {value!r}")
    return value


def load_study_config(path: str | Path) -> StudyConfig:
    """Read and validate ``study.toml``; input paths are resolved relative to the file.

    Raises :class:`PosthocInputError` naming the file and the key for a missing file, bad TOML,
    an unknown or mistyped key, a missing input file, or two inputs with the same system and dataset.
    """
    source = Path(path)
    if not source.is_file():
        raise PosthocInputError(f"study config {source} does not exist; pass the path of a study.toml")
    try:
        data = tomllib.loads(source.read_text(encoding="utf-8"))
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
        raise PosthocInputError(f"study config {source} is not valid TOML: {exc}") from None
    unknown = set(data) - {"study", "inputs"}
    if unknown:
        raise PosthocInputError(
            f"study config {source}: unknown table(s) {sorted(unknown)}; use [study] and [[inputs]]"
        )
    study = data.get("study")
    if not isinstance(study, dict):
        raise PosthocInputError(f"study config {source}: missing [study] table (name, seed, ...)")
    unknown = set(study) - _STUDY_KEYS
    if unknown:
        raise PosthocInputError(
            f"study config {source}: unknown key(s) {sorted(unknown)} in [study]; known: {sorted(_STUDY_KEYS)}"
        )
    for key in ("name", "seed"):
        if key not in study:
            raise PosthocInputError(f"study config {source}: [study] {key} is required")
    raw_inputs = data.get("inputs", [])
    if not isinstance(raw_inputs, list) or not raw_inputs:
        raise PosthocInputError(f"study config {source}: add at least one [[inputs]] table with path and system")
    inputs: list[StudyInput] = []
    seen: set[tuple[str, str | None, str]] = set()
    for number, table in enumerate(raw_inputs, start=1):
        where = f"study config {source}: [[inputs]] #{number}"
        if not isinstance(table, dict):
            raise PosthocInputError(f"{where} must be a table")
        unknown = set(table) - _INPUT_KEYS
        if unknown:
            raise PosthocInputError(f"{where}: unknown key(s) {sorted(unknown)}; known: {sorted(_INPUT_KEYS)}")
        written = table.get("path")
        if not isinstance(written, str) or not written.strip():
            raise PosthocInputError(f"{where} path is required (a file relative to the config)")
        resolved = (source.parent / written).resolve()
        if not resolved.is_file():
            what = "is a folder, not a file" if resolved.is_dir() else "does not exist"
            raise PosthocInputError(f"{where} path {written!r} {what} (looked at {resolved})")
        system = table.get("system", "GT")
        if not isinstance(system, str) or not system.strip():
            raise PosthocInputError(f"{where} system must be a non-empty string, got {system!r}")
        fmt = _optional_str(table, "format", where)
        dataset = _optional_str(table, "dataset", where)
        identity = (system, dataset, str(resolved))
        if identity in seen:
            raise PosthocInputError(f"{where} repeats path {written!r} for system {system!r}; list each file once")
        seen.add(identity)
        inputs.append(StudyInput(path=resolved, system=system, format=fmt, dataset=dataset,
                                 path_as_written=written, sha256=file_sha256(resolved), named="system" in table))
    return StudyConfig(
        name=study["name"], seed=study["seed"], k=study.get("k", 1),
        tasks_per_batch=study.get("tasks_per_batch", 20), max_chars=study.get("max_chars", 300),
        n_workers=study.get("n_workers"), control_tasks=study.get("control_tasks", True),
        inputs=tuple(inputs), source=source,
    )


def read_study_inputs(config: StudyConfig, *, progress: bool = False) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Read every input of ``config`` with :func:`posthoc.readers.read_mentions` and merge them.

    Returns ``(documents, mentions)``. Documents read from an earlier input are passed to later
    readers, so a system's file that carries no text can be read against the ground truth's text.
    """
    try:
        from posthoc.readers import read_mentions
    except ImportError as exc:  # the readers package is built in parallel
        raise PosthocInputError(f"the readers (posthoc.readers) are not available in this build: {exc}") from None
    corpus: Any = None
    for number, spec in enumerate(config.inputs, start=1):
        documents = corpus.documents if corpus is not None else None
        read = read_mentions(spec.path, fmt=spec.format, dataset=spec.dataset, system=spec.system,
                             documents=documents, progress=progress)
        _check_system_names(config, number, spec, read.systems)
        corpus = read if corpus is None else corpus.merge(read)
    if corpus is None:
        raise PosthocInputError("the study config lists no inputs")
    return corpus.documents, corpus.mentions


def _check_system_names(config: StudyConfig, number: int, spec: StudyInput, found: list[str]) -> None:
    """An input whose config names its system must not hold lines naming another (a JSONL line's ``system``
    wins over the reader's default, so the config's name would otherwise be dropped without a word)."""
    other = [name for name in found if name != spec.system]
    if not spec.named or not other:
        return
    names = ", ".join(repr(name) for name in other)
    raise PosthocInputError(
        f"study config {config.source or 'study.toml'}: [[inputs]] #{number} ({spec.path_as_written or spec.path}) "
        f"says system = {spec.system!r} but its lines say \"system\": {names}; make them one name (system = "
        f"{other[0]!r} in the config, or \"system\": {spec.system!r} in the file), or leave system out of this "
        "[[inputs]] table to take the file's names")


def sample_study_config(*, name: str = "sample", seed: int = 20260101, k: int = 1, n_workers: int | None = None,
                        max_chars: int = 300, tasks_per_batch: int = 20, control_tasks: bool = True) -> StudyConfig:
    """A study over the bundled sample corpus (:func:`posthoc.sample.sample_paths`: GT, E2E, REL as JSONL).

    For the demo and the tests; the inputs are the sample's files, the dataset its name.
    """
    try:
        from posthoc.sample import DATASET, sample_paths
    except ImportError as exc:  # the sample corpus is built in parallel
        raise PosthocInputError(f"the sample corpus (posthoc.sample) is not available: {exc}") from None
    inputs = tuple(
        StudyInput(path=path, system=system, format="jsonl", dataset=DATASET, path_as_written=path.name,
                   sha256=file_sha256(path))
        for system, path in sample_paths().items()
    )
    return StudyConfig(name=name, seed=seed, k=k, n_workers=n_workers, max_chars=max_chars,
                       tasks_per_batch=tasks_per_batch, control_tasks=control_tasks, inputs=inputs)
