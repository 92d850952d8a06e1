"""What a ``posthoc score`` run is asked for: the scoring options (:class:`ScoreOptions`) and where the
judgements come from (:class:`JudgementSource`), each one value, checked in one place before any output is
touched."""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Literal

from posthoc.errors import PosthocInputError

if TYPE_CHECKING:
    from posthoc.metrics.options import ScoringOptions

FORMATS = ("csv", "parquet")
#: ``--union`` (:data:`posthoc.metrics.verification.UNIONS`) and ``--interval``
#: (:data:`posthoc.metrics.intervals.METHODS`), named here so that checking the options imports no metrics (and no
#: pandas: a periodic run with nothing new needs neither, issue 24); tests/score/test_score_option_choices.py holds
#: them equal to the metrics' own
UNIONS = ("exact", "overlap")
INTERVALS = ("bca", "percentile")


@dataclass(frozen=True)
class ScoreOptions:
    """How a study is scored (:func:`posthoc.metrics.score_judgements`) and how the run behaves.

    ``n_resamples`` bootstrap resamples (0 or more) drawn with ``seed`` over ``resample_unit``; ``fmt``: the
    tables' format, ``csv`` or ``parquet``; ``union``: the verification union, ``exact`` or ``overlap``;
    ``interval``: the intervals' method, ``bca`` or ``percentile``; ``target_halfwidth``: the half-width the
    "Stop now or go on" table holds each cell to (None: the saved estimate's target, if any). ``periodic``: an
    unchanged fingerprint writes nothing (status ``nothing-new``); ``progress``: progress bars; ``kb_index``: a KB
    index of ``posthoc kb build``, which adds the ``strict_kb`` pre-annotation scores (links compared through
    redirects and Wikidata ids) beside the plain ones. PosthocInputError on a bad value.
    """

    n_resamples: int = 1000
    seed: int = 0
    resample_unit: str = "doc_id"
    fmt: Literal["csv", "parquet"] = "csv"
    union: str = "exact"
    interval: str = "bca"
    target_halfwidth: float | None = None
    periodic: bool = False
    progress: bool = False
    kb_index: str | None = None

    def __post_init__(self) -> None:
        if self.fmt not in FORMATS:
            raise PosthocInputError(f"--format must be one of {', '.join(FORMATS)}, not {self.fmt!r}")
        if self.n_resamples < 0:
            raise PosthocInputError(f"--resamples must be 0 or more, not {self.n_resamples}")
        target = self.target_halfwidth
        if target is not None and (isinstance(target, bool) or not isinstance(target, (int, float))
                                   or not 0 < target < 1):
            raise PosthocInputError(f"--target-halfwidth must be between 0 and 1 (e.g. 0.02), not {target!r}")
        if self.union not in UNIONS:
            raise PosthocInputError(f"union must be one of {', '.join(UNIONS)}, not {self.union!r}")
        if self.interval not in INTERVALS:
            raise PosthocInputError(f"interval method must be one of {', '.join(INTERVALS)}, not {self.interval!r}")
        if self.kb_index is not None and not os.path.isfile(self.kb_index):
            raise PosthocInputError(f"--kb {self.kb_index}: no such KB index; build one with `posthoc kb build`")

    def fingerprinted(self) -> dict[str, int | str]:
        """The options that decide the outputs, as the fingerprint digests them and ``summary.json`` holds them
        (the target only when one is given, as text: a run without one digests as before)."""
        chosen: dict[str, int | str] = {"n_resamples": self.n_resamples, "seed": self.seed,
                                        "resample_unit": self.resample_unit, "format": self.fmt,
                                        "union": self.union, "interval": self.interval}
        if self.target_halfwidth is not None:
            chosen["target_halfwidth"] = repr(float(self.target_halfwidth))
        if self.kb_index is not None:  # the index's name, size and time: a rebuilt index scores anew
            stat = os.stat(self.kb_index)
            chosen["kb_index"] = f"{os.path.basename(self.kb_index)}:{stat.st_size}:{stat.st_mtime_ns}"
        return chosen

    def scoring(self, *, study: str) -> ScoringOptions:
        """The settings of :func:`posthoc.metrics.score_judgements` for ``study`` (the others at their defaults)."""
        from posthoc.metrics.options import ScoringOptions

        return ScoringOptions(n_resamples=self.n_resamples, seed=self.seed, resample_unit=self.resample_unit,
                              study=study, union=self.union, interval=self.interval)


@dataclass(frozen=True)
class JudgementSource:
    """Where a study's judgements come from: Label Studio export files (``export_files``, made with
    ``label_config``, ``None``: the bundled one), else Label Studio at ``ls_url`` with ``token`` (the study's
    projects, or only ``project_ids``)."""

    ls_url: str | None = None
    token: str | None = None
    project_ids: Sequence[int] = ()
    export_files: Sequence[str | os.PathLike[str]] = ()
    label_config: str | None = None

    def check(self) -> None:
        """PosthocInputError unless the judgements have a source: readable export files, or a URL and a token."""
        if self.export_files:
            for path in self.export_files:
                if not Path(path).is_file():
                    what = "is a folder" if Path(path).is_dir() else "does not exist"
                    raise PosthocInputError(f"--export-file {path} {what}; give a Label Studio JSON export file")
            return
        self.labelstudio()

    def labelstudio(self) -> tuple[str, str]:
        """``(URL, token)`` of the Label Studio to export from; PosthocInputError when either is missing or the URL
        is not an http(s) URL."""
        if not self.ls_url:
            raise PosthocInputError("give a Label Studio URL (--url or env POSTHOC_LS_URL) or export files "
                                    "(--export-file)")
        from posthoc.labelstudio.url import check_url

        check_url(self.ls_url)
        if not self.token:
            raise PosthocInputError("no Label Studio API token: set env POSTHOC_LS_TOKEN or LABEL_STUDIO_TOKEN "
                                    "(or the variable named by --token-env)")
        return self.ls_url, self.token
