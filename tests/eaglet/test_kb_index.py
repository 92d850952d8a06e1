"""The index of Wikipedia's dumps as Eaglet's KB (issue 42): the paper's outdated URI through the dump path, and
every status the URI rule reads."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
from click.testing import CliRunner

from posthoc.cli.flags import check_command
from posthoc.eaglet.kb import UriStatus
from posthoc.eaglet.kb_index import WikiIndexKb
from posthoc.readers.wiki_index_build import build_index

DUMPS = Path(__file__).parents[1] / "readers" / "data" / "kb"
W = "https://en.wikipedia.org/wiki/"


def _index(tmp_path: Path) -> Path:
    out = tmp_path / "kb.sqlite"
    build_index(page=DUMPS / "enwiki-20261201-page.sql", redirect=DUMPS / "enwiki-20261201-redirect.sql",
                page_props=DUMPS / "enwiki-20261201-page_props.sql", out=out)
    return out


def test_the_paper_example_is_an_outdated_uri_through_the_dump_path(shared_data: Path, tmp_path: Path) -> None:
    out = tmp_path / "out"
    result = CliRunner().invoke(check_command, [str(shared_data / "eaglet" / "paper_examples.ttl"), "--out", str(out),
                                                "--kb", str(_index(tmp_path)), "--rules", "uri"])
    assert result.exit_code == 0, result.output
    flags = pd.read_csv(out / "flags.csv")
    outdated = flags[flags["rule"] == "outdated_uri"]
    assert len(outdated) == 1 and outdated["link"].iloc[0] == W + "People%27s_Republic_of_China"
    assert outdated["partner_link"].iloc[0] == W + "China" and outdated["suggestion"].iloc[0] == "update-uri"


def test_every_status(tmp_path: Path) -> None:
    kb = WikiIndexKb(_index(tmp_path))
    answers = kb.lookup([W + "Paris_(France)", W + "Double_to_Paris", W + "Loop_A", W + "To_nowhere",
                         W + "Mercury", W + "Paris", W + "Atlantis", "http://www.wikidata.org/entity/Q90",
                         "http://www.wikidata.org/entity/Q999", "https://de.wikipedia.org/wiki/Paris",
                         W + "History_of_Paris_(section)"])
    assert answers[W + "Paris_(France)"] == UriStatus("redirect", W + "Paris")
    assert answers[W + "Double_to_Paris"] == UriStatus("redirect", W + "Paris", detail="double redirect, 2 hops")
    assert answers[W + "History_of_Paris_(section)"].detail == "to section History"
    assert answers[W + "Loop_A"].kind == "missing" and "loop" in answers[W + "Loop_A"].detail
    assert answers[W + "To_nowhere"].kind == "missing" and "Missing_page" in answers[W + "To_nowhere"].detail
    assert answers[W + "Mercury"].kind == "disambiguation" and answers[W + "Paris"].kind == "page"
    assert answers[W + "Atlantis"] == UriStatus("missing", detail="title not in the KB index")
    assert answers["http://www.wikidata.org/entity/Q90"].kind == "page"
    assert answers["http://www.wikidata.org/entity/Q999"].kind == "unknown"
    assert answers["https://de.wikipedia.org/wiki/Paris"].kind == "unknown"


def test_kb_and_kb_files_together_are_refused(tmp_path: Path) -> None:
    tsv = tmp_path / "kb.tsv"
    tsv.write_text("Paris\tpage\n", encoding="utf-8")
    result = CliRunner().invoke(check_command, [str(DUMPS / "absent.ttl"), "--out", str(tmp_path / "out"),
                                                "--kb", str(tsv), "--kb-tsv", str(tsv)])
    assert result.exit_code != 0 and "give one knowledge base" in str(result.exception)
