"""The change signal's pure parts (``posthoc.export.signals``): Label Studio's times in the Data Manager's fixed
format, the baseline that moves to the most recent task update, and a key that moves with every part."""

from __future__ import annotations

import pytest

from posthoc.errors import PosthocServiceError
from posthoc.export.signals import EPOCH, ProjectSignal, dm_timestamp, since_query


def test_times_compare_as_text_as_in_time() -> None:
    assert dm_timestamp("2026-12-03T15:41:00Z") == "2026-12-03T15:41:00.000000Z"  # microseconds absent when zero
    assert dm_timestamp("2026-12-03T15:41:00.5Z") == "2026-12-03T15:41:00.500000Z"
    assert dm_timestamp("2026-12-03T16:41:00.000001+01:00") == "2026-12-03T15:41:00.000001Z"
    times = ["2026-12-03T15:41:00Z", "2026-12-03T15:41:00.000001Z", "2026-12-03T15:40:59.999999Z",
             "2025-01-01T00:00:00Z"]
    assert sorted(map(dm_timestamp, times)) == [dm_timestamp(t) for t in sorted(times, key=dm_timestamp)]
    assert sorted(map(dm_timestamp, times))[0] > EPOCH
    with pytest.raises(PosthocServiceError, match="no ISO 8601 time"):
        dm_timestamp("yesterday")


def _signal(**changes: object) -> ProjectSignal:
    fields: dict[str, object] = {"project_id": 7, "counts": (4, 3, 0, 4), "label_config": "<View/>",
                                 "baseline": "2026-12-03T15:00:00.000000Z", "recent": 1,
                                 "latest": (12, "2026-12-03T14:00:00.000000Z")}
    return ProjectSignal(**{**fields, **changes})  # type: ignore[arg-type]


def test_the_baseline_moves_only_forward_to_the_latest_update() -> None:
    assert _signal().rebaselined() == "2026-12-03T15:00:00.000000Z"  # a draft task updated before the baseline
    later = _signal(latest=(13, "2026-12-03T16:00:00.000000Z"))
    assert later.rebaselined() == "2026-12-03T16:00:00.000000Z"
    assert _signal(latest=None, recent=0).rebaselined() == "2026-12-03T15:00:00.000000Z"


def test_the_key_moves_with_every_part() -> None:
    base = _signal().key
    for change in ({"counts": (5, 3, 0, 4)}, {"label_config": "<View></View>"}, {"recent": 2},
                   {"latest": (12, "2026-12-03T14:00:00.000001Z")}, {"latest": (11, "2026-12-03T14:00:00.000000Z")},
                   {"baseline": "2026-12-03T15:00:00.000001Z"}, {"latest": None}):
        assert _signal(**change).key != base, change
    assert _signal().key == base


def test_the_query_counts_drafts_or_tasks_updated_after_the_baseline_most_recent_first() -> None:
    query = since_query("2026-12-03T15:00:00.000000Z")
    filters = query["filters"]
    assert isinstance(filters, dict) and filters["conjunction"] == "or"
    assert [(f["filter"], f["operator"], f["value"]) for f in filters["items"]] == [
        ("filter:tasks:draft_exists", "equal", True),
        ("filter:tasks:updated_at", "greater", "2026-12-03T15:00:00.000000Z")]
    assert query["ordering"] == ["-tasks:updated_at"]
