"""Pure parts: task data / KB page HTML (escaping, only http(s) clickable) and the simulated annotators."""

from __future__ import annotations

from html.parser import HTMLParser

import numpy as np
import pandas as pd
import pytest

from posthoc.jobs.simulate import SimulationConfig, annotation_result, biased, plan_decisions
from posthoc.labelstudio.label_config import verification_tags
from posthoc.labelstudio.tasks import is_web_link, kb_pages_html, study_task_data
from posthoc.paths import label_config


class _Collect(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.tags: list[str] = []
        self.hrefs: list[str] = []
        self.text: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append(tag)
        self.hrefs.extend(v or "" for k, v in attrs if k == "href")

    def handle_data(self, data: str) -> None:
        self.text.append(data)


def _parse(markup: str) -> _Collect:
    parser = _Collect()
    parser.feed(markup)
    return parser


def test_kb_pages_escape_everything_and_link_only_http() -> None:
    markup = kb_pages_html([
        {"surface": "<script>alert(1)</script>", "link": "https://en.wikipedia.org/wiki/Paris"},
        {"surface": "evil", "link": "javascript:alert(1)"},
        {"surface": "quote", "link": 'https://example.org/"><img/src=x/onerror=alert(1)>'},
        {"surface": "data", "link": "data:text/html,<b>x</b>"},
        {"surface": "nil", "link": "nil:Motorola_Inc", "is_nil": True},
    ])
    parsed = _parse(markup)
    assert "script" not in parsed.tags and "img" not in parsed.tags
    assert parsed.hrefs == ["https://en.wikipedia.org/wiki/Paris", 'https://example.org/"><img/src=x/onerror=alert(1)>']
    text = "".join(parsed.text)
    assert "<script>alert(1)</script>" in text and "javascript:alert(1)" in text and "NIL" in text
    assert markup.count('target="_blank"') == 2 and markup.count('rel="noopener noreferrer nofollow"') == 2


@pytest.mark.parametrize(("link", "ok"), [
    ("https://en.wikipedia.org/wiki/X", True), ("http://a.org", True), ("HTTPS://A.ORG/x", True),
    ("javascript:alert(1)", False), ("//evil.org/x", False), ("https:///nohost", False),
    ("https://a.org/x y", False), ("https://a.org/\x00", False), ("", False), ("ftp://a.org", False),
])
def test_is_web_link(link: str, ok: bool) -> None:
    assert is_web_link(link) is ok


def test_study_task_data_keeps_text_exactly() -> None:
    text = "Zoë 👩‍👩‍👧 in Reykjavík\r\ne\u0301"
    data = study_task_data("tkey", text, [])
    assert data["text"] == text and data["task_key"] == "tkey"
    assert set(data) == {"text", "task_key", "batch_position", "kb_pages"} and data["batch_position"] == ""


def test_study_task_data_says_where_the_task_sits_in_the_batch() -> None:
    assert study_task_data("k", "t", [], number=2, total=17)["batch_position"] == "Task 2 of 17 in your batch"


def test_biased_raises_verify_after_verify_only() -> None:
    base = np.array([0.6, 0.3, 0.1])
    after = biased(base, "verify", 0.2)
    assert after == pytest.approx([0.8, 0.15, 0.05]) and after.sum() == pytest.approx(1)
    assert biased(base, "edit", 0.2) is base


def _synthetic_mentions(n: int, system: str = "E2E") -> pd.DataFrame:
    return pd.DataFrame({
        "worker": ["w1"] * n, "task_key": [f"t{i // 3}" for i in range(n)], "position": [i // 3 for i in range(n)],
        "system": [system] * n, "is_control": [False] * n, "mention_id": [f"m{i}" for i in range(n)],
        "surface": ["Paris"] * n, "link": ["https://en.wikipedia.org/wiki/Paris"] * n,
        "expected_outcome": [None] * n, "expected_link": [None] * n,
    })


def test_simulation_recovers_its_known_parameters() -> None:
    probs = {"E2E": (0.6, 0.25, 0.15)}
    config = SimulationConfig(seed=11, outcome_probabilities=probs, lag1_boost=0.2)
    decisions = plan_decisions(_synthetic_mentions(30000), config)
    outcome = decisions["outcome"].to_numpy()
    previous_verify = outcome[:-1] == "verify"
    current_verify = outcome[1:] == "verify"
    after_verify = current_verify[previous_verify].mean()
    after_other = current_verify[~previous_verify].mean()
    assert after_verify == pytest.approx(0.8, abs=0.015)
    assert after_other == pytest.approx(0.6, abs=0.02)
    assert set(decisions.loc[decisions["outcome"] == "edit", "new_link"].str.endswith("_(disambiguation)")) == {True}
    again = plan_decisions(_synthetic_mentions(300), config)
    assert again.equals(plan_decisions(_synthetic_mentions(300), config))


def test_careless_worker_verifies_everything_fast() -> None:
    decisions = plan_decisions(_synthetic_mentions(300), SimulationConfig(careless_worker="w1"))
    assert set(decisions["outcome"]) == {"verify"} and decisions["lead_time"].max() <= 4


def test_annotation_result_decides_each_region() -> None:
    tags = verification_tags(label_config("entity_verification"))
    assert tags.decision_in_labels
    span = {"start": 0, "end": 5, "text": "Paris"}
    prediction = [
        {"id": "a", "from_name": "mention", "to_name": "text", "type": "labels",
         "value": {**span, "labels": ["undecided"]}},
        {"id": "a", "from_name": "link", "to_name": "text", "type": "textarea", "value": {**span, "text": ["L"]}},
        {"id": "b", "from_name": "mention", "to_name": "text", "type": "labels",
         "value": {"start": 6, "end": 8, "text": "is", "labels": ["undecided"]}},
    ]
    result = annotation_result(prediction, {"a": ("edit", "https://x.org/N"), "b": ("remove", None)}, tags)
    kinds = [(r["id"], r["from_name"]) for r in result]
    assert kinds == [("a", "mention"), ("a", "link"), ("a", "new_link"), ("b", "mention")]
    assert result[0]["value"]["labels"] == ["edit"] and result[3]["value"]["labels"] == ["remove"]
    assert result[2]["value"]["text"] == ["https://x.org/N"]
    assert prediction[0]["value"]["labels"] == ["undecided"]  # the prediction itself is left alone
    dropped = annotation_result(prediction, {"a": ("verify", None)}, tags, drop=frozenset({"b"}))
    assert {r["id"] for r in dropped} == {"a"}
