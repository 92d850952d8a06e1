"""The baseline dictionary linker of live mode."""

from __future__ import annotations

import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from posthoc.errors import PosthocInputError
from posthoc.predictors.linker import AliasTable, DictionaryLinker, frames_from_files, tokens


def _table(pairs: list[tuple[str, str]], **options: bool) -> AliasTable:
    frame = pd.DataFrame(pairs, columns=["surface", "link"])
    return AliasTable.from_mentions([frame], **options)


def _found(table: AliasTable, text: str) -> list[tuple[str, str]]:
    return [(span.surface, span.link) for span in DictionaryLinker(table).link(text)]


def test_alias_takes_the_most_frequent_link_and_breaks_ties_by_the_smallest() -> None:
    table = _table([("Paris", "P_city"), ("Paris", "P_myth"), ("Paris", "P_city"), ("Kent", "K_b"), ("Kent", "K_a")])
    assert table.get("Paris") == "P_city"
    assert table.get("Kent") == "K_a"
    again = _table([("Kent", "K_a"), ("Kent", "K_b")])
    assert again.get("Kent") == "K_a"  # order of the input does not matter


def test_nil_mentions_are_left_out_unless_asked() -> None:
    frame = pd.DataFrame({"surface": ["Acme", "Acme"], "link": ["nil:Acme", "nil:Acme"], "is_nil": [True, True]})
    assert AliasTable.from_mentions([frame]).get("Acme") is None
    assert AliasTable.from_mentions([frame], include_nil=True).get("Acme") == "nil:Acme"


def test_leftmost_longest_non_overlapping() -> None:
    table = _table([("New York", "NY"), ("York", "Y"), ("New York Times", "NYT"), ("Times Square", "TS")])
    assert _found(table, "The New York Times Square story") == [("New York Times", "NYT")]
    assert _found(table, "York and New York.") == [("York", "Y"), ("New York", "NY")]


def test_matches_never_cut_words_combining_marks_or_emoji() -> None:
    table = _table([("Cafe", "C"), ("Obama", "O"), ("👩", "W"), ("e", "E")])
    assert _found(table, "Obamacare and Cafe\u0301 and Cafe.") == [("Cafe", "C")]
    assert _found(table, "team 👩\u200d👩\u200d👧 and 👩 alone") == [("👩", "W")]
    text = "Cafe\u0301 Cafe"
    (span,) = DictionaryLinker(table).link(text)
    assert (span.start, span.end) == (6, 10) and text[span.start:span.end] == "Cafe"


def test_cjk_aliases_match_inside_runs_and_offsets_are_code_points() -> None:
    table = _table([("東京", "Tokyo"), ("東京都", "Tokyo_Metropolis"), ("𠮷野家", "Yoshinoya")])
    text = "🇯🇵 東京都に𠮷野家がある"
    spans = DictionaryLinker(table).link(text)
    assert [(s.surface, s.link) for s in spans] == [("東京都", "Tokyo_Metropolis"), ("𠮷野家", "Yoshinoya")]
    for span in spans:
        assert text[span.start:span.end] == span.surface
    assert (spans[0].start, spans[1].start) == (3, 7)  # a flag is two code points, four UTF-16 units


def test_case_insensitive_option() -> None:
    table = _table([("Paris", "P")], case_sensitive=False)
    assert _found(table, "PARIS and paris") == [("PARIS", "P"), ("paris", "P")]
    assert _found(_table([("Paris", "P")]), "PARIS and paris") == []


def test_missing_columns_and_missing_files_are_input_errors(tmp_path: object) -> None:
    with pytest.raises(PosthocInputError, match="surface"):
        AliasTable.from_mentions([pd.DataFrame({"link": ["x"]})])
    with pytest.raises(PosthocInputError, match="no such file"):
        frames_from_files(["/nonexistent/aliases.csv"])


def test_alias_files_csv_and_jsonl(tmp_path: object, sample_mentions: pd.DataFrame) -> None:
    from pathlib import Path

    from posthoc.sample import sample_paths

    folder = Path(str(tmp_path))
    (folder / "aliases.csv").write_text("surface,link\nBerlin,https://en.wikipedia.org/wiki/Berlin\n", encoding="utf-8")
    frames = frames_from_files([str(folder / "aliases.csv"), str(sample_paths()["GT"])])
    table = AliasTable.from_mentions(frames)
    assert table.get("Berlin") == "https://en.wikipedia.org/wiki/Berlin"
    gt = sample_mentions[(sample_mentions["system"] == "GT") & ~sample_mentions["is_nil"]]
    assert table.get(str(gt["surface"].iloc[0])) is not None


_alphabet = st.sampled_from([*"ab ,.-", "é", "e\u0301", "東", "京", "🇫🇷", "👍🏽", "\n"])


@settings(max_examples=60, deadline=None)
@given(text=st.lists(_alphabet, max_size=40).map("".join),
       aliases=st.lists(st.lists(_alphabet, min_size=1, max_size=6).map("".join), max_size=8))
def test_matches_are_aliases_on_token_boundaries_without_overlap(text: str, aliases: list[str]) -> None:
    table = _table([(alias, f"L{i}") for i, alias in enumerate(aliases)])
    spans = DictionaryLinker(table).link(text)
    starts = {start for start, _ in tokens(text)}
    ends = {end for _, end in tokens(text)}
    previous_end = 0
    for span in spans:
        assert text[span.start:span.end] == span.surface
        assert table.get(span.surface) == span.link
        assert span.start in starts and span.end in ends
        assert span.start >= previous_end
        previous_end = span.end


def test_link_frame_and_records_agree() -> None:
    linker = DictionaryLinker(_table([("Ghent", "G"), ("Liège", "L")]))
    text = "From Liège to Ghent."
    frame = linker.link_frame(text)
    assert frame.to_dict("records") == linker.link_records(text)
    assert list(frame["mention_id"]) == ["live-5-10", "live-14-19"]
    assert linker.link_frame("nothing here").columns.tolist() == ["mention_id", "start", "end", "surface", "link"]
