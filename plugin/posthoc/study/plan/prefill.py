"""The manifest's chunk texts and pre-filled mentions in memory, by opaque task key.

What the ML backend answers ``/predict`` from and what ``posthoc study create`` imports inline with each
task (both through :func:`posthoc.labelstudio.payloads.manifest_prediction`), read once from
:meth:`Manifest.tasks` and :meth:`Manifest.mentions` (two queries): look-ups are dictionary look-ups only.
The manifest file is immutable (a plan is never changed in place), so the index never goes stale.
"""

from __future__ import annotations

from typing import Any, Protocol

import pandas as pd


class ManifestLike(Protocol):
    """What is read of ``posthoc.study.plan.manifest.Manifest`` (once)."""

    def tasks(self, worker: str | None = None) -> pd.DataFrame:
        """One row a task: ``task_key, text, ...``."""

    def mentions(self) -> pd.DataFrame:
        """Every pre-filled annotation: ``task_key, mention_id, start, end, surface, link, ...`` in text order."""


class PrefillIndex:
    """Texts (``texts``) and pre-filled mentions (``mention_id, start, end, surface, link, is_nil``) by task key."""

    FIELDS = ("mention_id", "start", "end", "surface", "link", "is_nil")

    def __init__(self, manifest: ManifestLike) -> None:
        tasks = manifest.tasks()
        self.texts: dict[str, str] = dict(zip(tasks["task_key"].astype(str), tasks["text"], strict=True))
        mentions = manifest.mentions()
        self.mentions: dict[str, list[dict[str, Any]]] = {}
        for record in mentions[["task_key", *self.FIELDS]].to_dict("records"):
            row = {str(name): value for name, value in record.items()}
            self.mentions.setdefault(str(row.pop("task_key")), []).append(row)

    def __len__(self) -> int:
        return len(self.texts)

    def text(self, task_key: str) -> str | None:
        """The chunk text of a task, ``None`` for an unknown key."""
        return self.texts.get(task_key)

    def prefill(self, task_key: str) -> list[dict[str, Any]]:
        """The task's pre-filled mentions in text order (empty for an unknown key)."""
        return self.mentions.get(task_key, [])

    def regions(self, task_key: str) -> dict[str, tuple[int, int, str]]:
        """``{mention_id: (start, end, link)}`` of the task's pre-filled mentions (what its prediction must hold)."""
        return {str(r["mention_id"]): (int(r["start"]), int(r["end"]), r["link"] if isinstance(r["link"], str)
                                       else "") for r in self.prefill(task_key)}
