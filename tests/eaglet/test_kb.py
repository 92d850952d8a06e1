"""KB snapshots from files, and the online MediaWiki checker's HTTP client.

The real MediaWiki cannot run here (no network, and a MediaWiki install is out of scope), so the
checker's client is tested against a loopback WSGI server (werkzeug) that answers the subset of the
Action API it uses (``action=query&redirects=1&prop=pageprops&ppprop=disambiguation``, formatversion 2)
with the documented response shape. It never touches the network.
"""

from __future__ import annotations

import bz2
import itertools
import json
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from werkzeug.serving import make_server
from werkzeug.wrappers import Request, Response

from posthoc.eaglet.kb import KbSnapshot, MediaWikiChecker, UriStatus
from posthoc.errors import PosthocInputError, PosthocServiceError

W = "https://en.wikipedia.org/wiki/"
DBR = "http://dbpedia.org/resource/"
DBO = "http://dbpedia.org/ontology/"


def test_dbpedia_ntriples_turtle_bz2_and_tsv(tmp_path: Path) -> None:
    redirects = tmp_path / "redirects_en.ttl.bz2"
    redirects.write_bytes(bz2.compress((
        f"<{DBR}People's_Republic_of_China> <{DBO}wikiPageRedirects> <{DBR}China> .\n"
        f"# a comment\n"
        f"<{DBR}Caf\\u00E9_Society> <{DBO}wikiPageRedirects> <{DBR}Old_Café> .\n"
        f"<{DBR}Old_Café> <{DBO}wikiPageRedirects> <{DBR}Café_society> .\n").encode()))
    disamb = tmp_path / "disambiguations_en.ttl"
    disamb.write_text(
        "@prefix dbr: <http://dbpedia.org/resource/> .\n@prefix dbo: <http://dbpedia.org/ontology/> .\n"
        "dbr:Mercury dbo:wikiPageDisambiguates dbr:Mercury_\\(planet\\), dbr:Mercury_\\(element\\) .\n",
        encoding="utf-8")
    tsv = tmp_path / "kb.tsv"
    tsv.write_text("title\tkind\ttarget\nSeattle\tpage\t\nUSA\tredirect\tUnited States\n"
                   "Portland\tdisambiguation\tPortland, Oregon|Portland, Maine\n", encoding="utf-8")
    kb = KbSnapshot.from_files(redirects=[redirects], disambiguations=[disamb], tsv=[tsv])
    answers = kb.lookup([W + "People%27s_Republic_of_China", W + "Caf%C3%A9_Society", W + "Mercury",
                         W + "Seattle", W + "USA", W + "Portland", W + "Tacoma"])
    assert answers[W + "People%27s_Republic_of_China"] == UriStatus("redirect", W + "China")
    assert answers[W + "Caf%C3%A9_Society"] == UriStatus("redirect", W + "Caf%C3%A9_society")  # chain followed
    assert answers[W + "Mercury"].kind == "disambiguation"
    assert set(answers[W + "Mercury"].candidates) == {W + "Mercury_(planet)", W + "Mercury_(element)"}
    assert answers[W + "USA"] == UriStatus("redirect", W + "United_States")
    assert answers[W + "Portland"].candidates == (W + "Portland,_Oregon", W + "Portland,_Maine")
    assert answers[W + "Seattle"].kind == "page"
    assert answers[W + "Tacoma"].kind == "missing"  # the TSV lists titles, Tacoma is not among them


def test_redirect_cycles_end_and_unknown_without_titles() -> None:
    kb = KbSnapshot(redirects={W + "A": W + "B", W + "B": W + "A"})
    assert kb.lookup([W + "A"])[W + "A"].kind == "redirect"
    assert kb.lookup([W + "C"])[W + "C"].kind == "unknown"


def test_bad_kb_files_are_input_errors(tmp_path: Path) -> None:
    bad = tmp_path / "redirects.ttl"
    bad.write_text("this is not a triple\n", encoding="utf-8")
    with pytest.raises(PosthocInputError, match="line 1"):
        KbSnapshot.from_files(redirects=[bad])
    with pytest.raises(PosthocInputError, match="no such KB file"):
        KbSnapshot.from_files(tsv=[tmp_path / "absent.tsv"])
    tsv = tmp_path / "kb.tsv"
    tsv.write_text("Seattle\tcity\t\n", encoding="utf-8")
    with pytest.raises(PosthocInputError, match="kind must be"):
        KbSnapshot.from_files(tsv=[tsv])


# ---- MediaWiki checker against a loopback stand-in for the Action API -------------------------------------------

PAGES = {"Seattle": {}, "China": {}, "Mercury": {"disambiguation": ""}}
REDIRECTS = {"People's Republic of China": "China"}


class FakeApi:
    def __init__(self) -> None:
        self.requests: list[tuple[float, dict[str, str]]] = []
        self.fail = False

    def __call__(self, environ: dict[str, Any], start_response: Any) -> Any:
        request = Request(environ)
        args = dict(request.args)
        self.requests.append((time.monotonic(), args))
        if self.fail:
            return Response("boom", status=500)(environ, start_response)
        titles = args["titles"].split("|")
        normalized = [{"from": t, "to": t.replace("_", " ")} for t in titles if "_" in t]
        names = [t.replace("_", " ") for t in titles]
        redirects = [{"from": n, "to": REDIRECTS[n]} for n in names if n in REDIRECTS]
        pages = []
        for name in names:
            final = REDIRECTS.get(name, name)
            if final in PAGES:
                page: dict[str, Any] = {"pageid": hash(final) % 1000, "ns": 0, "title": final}
                if PAGES[final]:
                    page["pageprops"] = PAGES[final]
                pages.append(page)
            else:
                pages.append({"ns": 0, "title": final, "missing": True})
        body = {"batchcomplete": True, "query": {"normalized": normalized, "redirects": redirects, "pages": pages}}
        return Response(json.dumps(body), mimetype="application/json")(environ, start_response)


@pytest.fixture
def api() -> Iterator[tuple[str, FakeApi]]:
    app = FakeApi()
    server = make_server("127.0.0.1", 0, app)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_port}/w/api.php", app
    finally:
        server.shutdown()
        thread.join(timeout=5)


def test_mediawiki_checker_statuses_batches_and_cache(api: tuple[str, FakeApi], tmp_path: Path) -> None:
    url, app = api
    cache = tmp_path / "cache.json"
    checker = MediaWikiChecker(url, cache_path=cache, min_interval=0.0, batch=2)
    links = [W + "People%27s_Republic_of_China", W + "Seattle", W + "Mercury", W + "Atlantis",
             "http://www.wikidata.org/entity/Q1"]
    answers = checker.lookup(links)
    assert answers[W + "People%27s_Republic_of_China"] == UriStatus("redirect", W + "China")
    assert answers[W + "Seattle"].kind == "page"
    assert answers[W + "Mercury"].kind == "disambiguation"
    assert answers[W + "Atlantis"].kind == "missing"
    assert answers["http://www.wikidata.org/entity/Q1"].kind == "unknown"  # not this wiki: never asked
    assert len(app.requests) == 2  # 4 titles, 2 a request
    assert {a["action"] for _, a in app.requests} == {"query"}
    assert all(a["redirects"] == "1" and a["ppprop"] == "disambiguation" for _, a in app.requests)
    assert checker.lookup(links) == answers and len(app.requests) == 2  # answered from memory
    again = MediaWikiChecker(url, cache_path=cache, min_interval=0.0)
    assert again.lookup(links) == answers and len(app.requests) == 2  # answered from the cache file


def test_mediawiki_checker_spaces_its_requests(api: tuple[str, FakeApi]) -> None:
    url, app = api
    checker = MediaWikiChecker(url, min_interval=0.2, batch=1)
    checker.lookup([W + "Seattle", W + "China", W + "Mercury"])
    times = [t for t, _ in app.requests]
    assert len(times) == 3
    assert all(later - earlier >= 0.19 for earlier, later in itertools.pairwise(times))


def test_mediawiki_failure_is_a_service_error(api: tuple[str, FakeApi]) -> None:
    url, app = api
    app.fail = True
    with pytest.raises(PosthocServiceError, match="MediaWiki API"):
        MediaWikiChecker(url, min_interval=0.0).lookup([W + "Seattle"])
