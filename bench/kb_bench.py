"""Bench: ``posthoc kb build`` from Wikipedia-format SQL dumps, look-ups, and the KB's cost in flags check and score
(issue 42).

Dumps are generated in the exact dump format (:mod:`kb_dumps`: realistic title lengths and escapes, English's
shares of namespaces, redirects and page properties) at three sizes, by default 0.1%, 0.3% and 1% of English
Wikipedia's 60 million page rows (redirect and page_props rows follow). Measured, each in a fresh process:

1. the build: wall time, CPU time and peak memory (``VmHWM`` of the build's process plus ``ru_maxrss`` of the second
   process it starts to read the redirect and page_props dumps) at each size, and the exponents of time and memory
   fitted on log-log (target <= 1.1: linear or better), extrapolated to English's size;
2. the competent baseline: ``mwsql`` (PyPI, the MediaWiki utilities' reader), parsing the same three files doing
   nothing else (every row of each, ``Dump.rows()``); both sides must find the same namespace-0 titles; the ratio
   is mwsql's wall time over the whole build's (target >= 1: the build, parse and index included, is at least as
   fast as the reference parser alone), and the same for CPU time (the build uses two processes; each side's CPU
   time counted from the start of its work, after its imports, as its wall time is); and our parser
   alone against mwsql, both reading every column of every row (the same row counts checked), CPU time;
3. the index's size against the compressed dumps' (target < 2x);
4. 100,000 distinct links (70% titles of the index, redirects among them, 20% absent, 10% Wikidata ids) resolved
   to entities in a fresh process (target < 1 s), against the baseline of one ``SELECT`` per link, wall and CPU
   time, median of three interleaved runs;
5. the cost of a KB in ``flags check``'s pipeline on the shared corpora (NIF + WNED; an index of their links'
   titles, every tenth a redirect) and in ``score_judgements`` on a synthetic study (``posthoc.synthetic``, its
   links in an index), each against the same run without a KB (target <= 10% more), in median CPU time (the
   wall times, printed too, swing by tens of percent on the shared machine).

    python bench/kb_bench.py                     # 0.1%, 0.3%, 1% of English
    python bench/kb_bench.py --sizes 20000,60000,180000 --keep /tmp/dumps
"""

from __future__ import annotations

import argparse
import json
import math
import os
import random
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
from benchlib import BenchRun, time_both
from kb_dumps import PAGE_COLUMNS, PROPS_COLUMNS, REDIRECT_COLUMNS, dump_text, sql_string, write_dumps

ENGLISH_PAGES = 60_000_000
LOOKUP_RUNS = 3
SHARED = Path(__file__).resolve().parents[1].parent / "shared" / "data"
PLUGIN = str(Path(__file__).resolve().parents[1] / "plugin")

_BUILD = """
import json, resource, sys, time
from posthoc.readers.wiki_index_build import build_index
d = sys.argv[1]
t, c = time.perf_counter(), time.process_time()
r = build_index(page=d + '/xxwiki-20261201-page.sql.gz', redirect=d + '/xxwiki-20261201-redirect.sql.gz',
                page_props=d + '/xxwiki-20261201-page_props.sql.gz', out=sys.argv[2])
me, kids = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
# this process's own high-water mark (VmHWM: ru_maxrss would carry the bench's own peak over from the fork that
# started this process), plus the peak of the one process it starts (forked while this one was still small)
hwm = next(int(line.split()[1]) for line in open('/proc/self/status') if line.startswith('VmHWM:'))
print(json.dumps({'wall': time.perf_counter() - t, 'rss_mb': (hwm + kids.ru_maxrss) / 1024,
                  'cpu': time.process_time() - c + kids.ru_utime + kids.ru_stime,
                  'titles': r.titles, 'redirects': r.redirects, 'problems': r.problems}))
"""
_MWSQL = """
import json, resource, sys, time
import mwsql
d = sys.argv[1]
t, c = time.perf_counter(), time.process_time()
counts, ns0 = {}, set()
for table in ('page', 'redirect', 'page_props'):
    n = 0
    for row in mwsql.Dump.from_file(d + f'/xxwiki-20261201-{table}.sql.gz').rows():
        n += 1
        if table == 'page' and row[1] == '0':
            ns0.add(row[2])
    counts[table] = n
me = resource.getrusage(resource.RUSAGE_SELF)
print(json.dumps({'wall': time.perf_counter() - t, 'rss_mb': me.ru_maxrss / 1024, 'cpu': time.process_time() - c,
                  'titles': len(ns0), 'rows': counts}))
"""
_PARSE = """
import json, resource, sys, time
from posthoc.readers.mediawiki_sql import read_rows, table_columns
d = sys.argv[1]
t, c = time.perf_counter(), time.process_time()
counts, ns0 = {}, set()
for table in ('page', 'redirect', 'page_props'):
    path = d + f'/xxwiki-20261201-{table}.sql.gz'
    n = 0
    for row in read_rows(path, table=table, columns=table_columns(path, table=table)):
        n += 1
        if table == 'page' and row[1] == 0:
            ns0.add(row[2])
    counts[table] = n
me = resource.getrusage(resource.RUSAGE_SELF)
print(json.dumps({'wall': time.perf_counter() - t, 'cpu': time.process_time() - c, 'titles': len(ns0),
                  'rows': counts}))
"""
_LOOKUP = """
import json, sys, time
t = time.perf_counter()
from posthoc.readers.wiki_index import WikiIndex
imports = time.perf_counter() - t
links = json.load(open(sys.argv[2]))
t, c = time.perf_counter(), time.process_time()
index = WikiIndex(sys.argv[1])
keys = index.entity_keys(links)
wall, cpu = time.perf_counter() - t, time.process_time() - c
moved = sum(1 for k, v in keys.items() if k != v)
print(json.dumps({'wall': wall, 'cpu': cpu, 'moved': moved, 'n': len(keys), 'imports': imports}))
"""
_LOOKUP_LOOP = """
import json, sqlite3, sys, time
from urllib.parse import unquote
t = time.perf_counter()
links = json.load(open(sys.argv[2]))
t, c = time.perf_counter(), time.process_time()
db = sqlite3.connect(f'file:{sys.argv[1]}?mode=ro', uri=True)
moved = 0
for link in links:
    if link.startswith('Q'):
        row = db.execute('SELECT title FROM titles WHERE wikidata = ? AND redirect = 0', (link,)).fetchone()
        moved += row is not None
        continue
    title = unquote(link.rsplit('/', 1)[1])
    row = db.execute('SELECT redirect, target, problem FROM titles WHERE title = ?', (title,)).fetchone()
    moved += row is not None and row[0] == 1 and row[1] is not None and row[2] in (None, 'double')
print(json.dumps({'wall': time.perf_counter() - t, 'cpu': time.process_time() - c, 'moved': moved}))
"""


def child(code: str, *args: str) -> dict[str, object]:
    env = {**os.environ, "PYTHONPATH": PLUGIN + os.pathsep + os.environ.get("PYTHONPATH", "")}
    done = subprocess.run([sys.executable, "-c", code, *args], capture_output=True, text=True, env=env, check=False)
    if done.returncode != 0:
        raise RuntimeError(done.stderr.strip().splitlines()[-1] if done.stderr.strip() else "child failed")
    return dict(json.loads(done.stdout.strip().splitlines()[-1]))


def exponent(sizes: list[float], values: list[float]) -> float:
    return float(np.polyfit(np.log(sizes), np.log(values), 1)[0])


def _met(ok: bool) -> str:
    return "met" if ok else "NOT met"


def bench_build(run: BenchRun, folder: Path, sizes: list[int]) -> Path:
    run.print("1-3. build from generated dumps (fresh process each), against mwsql parsing the same files")
    run.print(f"{'pages':>9} {'redirects':>9} {'props':>9} {'dumps MB':>8} {'build s':>8} {'CPU s':>6} "
              f"{'peak MB':>8} {'mwsql s':>8} {'CPU s':>6} {'ratio':>6} {'CPU':>5} {'index MB':>8} {'size':>5}")
    walls, cpus, peaks, ratios, cpu_ratios, shares, parse_ratios = [], [], [], [], [], [], []
    index = folder / "missing"
    for pages in sizes:
        dumps = folder / f"p{pages}"
        if not (dumps / "xxwiki-20261201-page_props.sql.gz").is_file():
            write_dumps(dumps, pages=pages, seed=pages)
        index = dumps / "kb.sqlite"
        ours = child(_BUILD, str(dumps), str(index))
        theirs = child(_MWSQL, str(dumps))
        parse = child(_PARSE, str(dumps))
        if parse["rows"] != theirs["rows"] or parse["titles"] != theirs["titles"]:
            run.fail(f"{pages} pages: our parser reads {parse['rows']}, mwsql {theirs['rows']}")
        parse_ratios.append(float(theirs["cpu"]) / float(parse["cpu"]))  # type: ignore[arg-type]
        if ours["titles"] != theirs["titles"]:
            run.fail(f"{pages} pages: the build has {ours['titles']} titles, mwsql finds {theirs['titles']}")
        dump_mb = sum(p.stat().st_size for p in dumps.glob("*.sql.gz")) / 1e6
        index_mb = index.stat().st_size / 1e6
        rows = theirs["rows"]
        assert isinstance(rows, dict)
        wall, peak = float(ours["wall"]), float(ours["rss_mb"])  # type: ignore[arg-type]
        ratio = float(theirs["wall"]) / wall  # type: ignore[arg-type]
        cpu, their_cpu = float(ours["cpu"]), float(theirs["cpu"])  # type: ignore[arg-type]
        walls.append(wall), peaks.append(peak), ratios.append(ratio), shares.append(index_mb / dump_mb)
        cpu_ratios.append(their_cpu / cpu)
        cpus.append(cpu)
        run.print(f"{rows['page']:>9,} {rows['redirect']:>9,} {rows['page_props']:>9,} {dump_mb:>8.1f} {wall:>8.2f} "
                  f"{cpu:>6.2f} {peak:>8.0f} {float(theirs['wall']):>8.2f} {their_cpu:>6.2f} "  # type: ignore[arg-type]
                  f"{ratio:>6.2f} {their_cpu / cpu:>5.2f} {index_mb:>8.1f} {index_mb / dump_mb:>4.2f}x")
    time_exp, cpu_exp, memory_exp = exponent(sizes, walls), exponent(sizes, cpus), exponent(sizes, peaks)
    english = walls[-1] * (ENGLISH_PAGES / sizes[-1]) ** max(time_exp, 1.0)
    run.print(f"fitted exponent: build wall time {time_exp:.3f}, CPU time {cpu_exp:.3f}, peak memory {memory_exp:.3f} "
              f"(target <= 1.1: wall {_met(time_exp <= 1.1)}, CPU {_met(cpu_exp <= 1.1)}, memory "
              f"{_met(memory_exp <= 1.1)}); English's size extrapolated from the largest with the wall "
              f"exponent (at least 1): {english / 60:.0f} min; peak memory at the largest {peaks[-1]:.0f} MB "
              "(target < 2 GB)")
    run.print(f"throughput ratio mwsql / build, wall: {', '.join(f'{r:.2f}' for r in ratios)} (target >= 1: "
              f"{_met(min(ratios) >= 1)}); CPU: {', '.join(f'{r:.2f}' for r in cpu_ratios)}; the parser alone (every "
              f"column of every row, same row counts as mwsql), CPU: {', '.join(f'{r:.2f}' for r in parse_ratios)}; "
              f"index / compressed dumps: {', '.join(f'{s:.2f}x' for s in shares)} "
              f"(target < 2x: {_met(max(shares) < 2)})")
    run.headline(f"kb build: exponents wall {time_exp:.2f}, CPU {cpu_exp:.2f}, memory {memory_exp:.2f} (<= 1.1), "
                 f"{sizes[-1]:,} page rows in {walls[-1]:.1f} s at {peaks[-1]:.0f} MB peak; "
                 f"{ratios[-1]:.2f}x mwsql's parse alone (wall; CPU {cpu_ratios[-1]:.2f}x), our parser alone "
                 f"{parse_ratios[-1]:.2f}x mwsql (CPU); index {shares[-1]:.2f}x the gzipped dumps")
    return index


def bench_lookup(run: BenchRun, index: Path, folder: Path) -> None:
    import sqlite3

    db = sqlite3.connect(index)
    titles = [t for (t,) in db.execute("SELECT title FROM titles ORDER BY page_id LIMIT 70000")]
    items = [q for (q,) in db.execute("SELECT wikidata FROM titles WHERE wikidata IS NOT NULL LIMIT 10000")]
    db.close()
    from posthoc.links import wikipedia_url

    links = [wikipedia_url(t) for t in titles] + [wikipedia_url(f"Absent_title_{i}") for i in range(20000)]
    links = list(dict.fromkeys(links + items))[:100_000]
    random.Random(1).shuffle(links)
    path = folder / "links.json"
    path.write_text(json.dumps(links), encoding="utf-8")
    ours_runs, loop_runs = [], []
    for _ in range(LOOKUP_RUNS):  # interleaved, each in a fresh process: the medians
        ours_runs.append(child(_LOOKUP, str(index), str(path)))
        loop_runs.append(child(_LOOKUP_LOOP, str(index), str(path)))
    ours, loop = ours_runs[0], loop_runs[0]
    wall, cpu = (float(np.median([float(r[k]) for r in ours_runs])) for k in ("wall", "cpu"))  # type: ignore[arg-type]
    loop_wall, loop_cpu = (float(np.median([float(r[k]) for r in loop_runs])) for k in ("wall", "cpu"))  # type: ignore[arg-type]
    walls = ", ".join(f"{float(r['wall']):.2f}" for r in ours_runs)  # type: ignore[arg-type]
    if any(r["moved"] != loop["moved"] for r in ours_runs):
        run.fail(f"the index moved {ours['moved']} links, one SELECT per link {loop['moved']}")
    run.print(f"\n4. {len(links):,} distinct links ({len(items):,} Wikidata ids) resolved from a cold start (fresh "
              f"process, the index opened and the links resolved; importing the module, which imports pandas "
              f"through posthoc.readers, took {float(ours['imports']):.2f} s more), median of {LOOKUP_RUNS} "  # type: ignore[arg-type]
              f"interleaved runs: {wall:.3f} s wall ({walls}), {cpu:.3f} s CPU (target < 1 s: {_met(wall < 1)}); "
              f"one SELECT per link: {loop_wall:.3f} s wall, {loop_cpu:.3f} s CPU; ratio {loop_wall / wall:.1f}x "
              f"wall, {loop_cpu / cpu:.1f}x CPU; links moved by the index: ours {ours['moved']}, loop {loop['moved']}")
    run.headline(f"kb look-up: 100,000 links in {wall:.2f} s from a cold start (< 1 s; CPU {cpu:.2f} s), "
                 f"{loop_wall / wall:.1f}x one SELECT per link")


def _index_of_links(folder: Path, links: list[str]) -> Path:
    """An index whose articles are the titles of ``links``; every tenth also gets a redirect ``<title>_(old)``."""
    from posthoc.links import title_of
    from posthoc.readers.wiki_index_build import build_index

    titles = sorted({t.replace(" ", "_") for t in map(title_of, links) if t})
    pages = [f"({i},0,{sql_string(t)},0,0,0.5,'20261120000000',NULL,1,1,'wikitext',NULL)"
             for i, t in enumerate(titles, start=1)]
    old = titles[::10]
    base = len(titles)
    pages += [f"({base + i},0,{sql_string(t + '_(old)')},1,0,0.5,'20261120000000',NULL,1,1,'wikitext',NULL)"
              for i, t in enumerate(old, start=1)]
    redirects = [f"({base + i},0,{sql_string(t)},'','')" for i, t in enumerate(old, start=1)]
    props = [f"({i},'wikibase_item','Q{i}',NULL)" for i in range(1, len(titles) + 1)]
    folder.mkdir(parents=True, exist_ok=True)
    for name, columns, rows in (("page", PAGE_COLUMNS, pages), ("redirect", REDIRECT_COLUMNS, redirects),
                                ("page_props", PROPS_COLUMNS, props)):
        (folder / f"enwiki-20261201-{name}.sql").write_text(dump_text(name, columns, [rows]), encoding="utf-8")
    out = folder / "kb.sqlite"
    build_index(**{t: folder / f"enwiki-20261201-{t}.sql" for t in ("page", "redirect", "page_props")}, out=out)
    return out


def bench_overheads(run: BenchRun, folder: Path, runs: int) -> None:
    from posthoc.eaglet.kb_index import WikiIndexKb
    from posthoc.eaglet.pipeline import default_pipeline
    from posthoc.jobs.score import with_kb_entities
    from posthoc.metrics import ScoringOptions, score_judgements
    from posthoc.readers import read_mentions
    from posthoc.synthetic import paper_sized_study

    wned = SHARED / "wned-wikipedia"
    paths = sorted((SHARED / "nif").glob("*.ttl")) + ([wned] if wned.is_dir() else [])
    if paths:
        corpus = read_mentions(paths[0])
        for path in paths[1:]:
            corpus = corpus.merge(read_mentions(path))
        kb = WikiIndexKb(_index_of_links(folder / "corpora", corpus.mentions["link"].tolist()))
        plain, with_kb = time_both(lambda: default_pipeline(tagger="rules").run(corpus.documents, corpus.mentions),
                                   lambda: default_pipeline(tagger="rules", kb=kb).run(corpus.documents,
                                                                                      corpus.mentions), runs=runs)
        rules = with_kb.result["rule"].value_counts().to_dict()
        if not set(plain.result["flag_id"]) <= set(with_kb.result["flag_id"]):
            run.fail("a flag of the run without a KB is missing with it")
        extra = with_kb.cpu_median / plain.cpu_median - 1  # CPU: far less noisy than wall on a shared machine
        run.print(f"\n5. flags pipeline on {', '.join(p.name for p in paths)} ({len(corpus.mentions):,} annotations), "
                  f"median CPU of {runs}: without KB {plain.cpu_median:.2f} s, with the index "
                  f"{with_kb.cpu_median:.2f} s (wall {plain.wall_median:.2f} / {with_kb.wall_median:.2f} s): "
                  f"{100 * extra:+.1f}% (target <= 10%: {_met(extra <= 0.10)}); "
                  f"URI flags with it: IU {rules.get('invalid_uri', 0)}, OU {rules.get('outdated_uri', 0)}, "
                  f"DU {rules.get('disambiguation_uri', 0)} (an index of the corpora's own titles: 0 / 0 / 0 "
                  f"expected); flags {len(plain.result)} without, {len(with_kb.result)} with (combined marking also "
                  "takes a KB title as evidence)")
    else:
        extra = math.nan
        run.print("\n5. ../shared/data absent: the flags overhead is not measured")
    _, mentions, judgements = paper_sized_study(k=1, seed=0, scale=0.3)
    index = _index_of_links(folder / "study", mentions["link"].tolist())
    options = ScoringOptions(n_resamples=1000)
    plain_score, kb_score = time_both(lambda: score_judgements(judgements, mentions, options=options),
                                      lambda: score_judgements(judgements, with_kb_entities(mentions, index),
                                                               options=options), runs=runs)
    pre = kb_score.result.preannotation
    strict = pre[pre["matching"] == "strict"].drop(columns="matching").reset_index(drop=True)
    strict_kb = pre[pre["matching"] == "strict_kb"].drop(columns="matching").reset_index(drop=True)
    if not strict[["precision", "recall", "f1"]].equals(strict_kb[["precision", "recall", "f1"]]):
        run.fail("no link of the study is a redirect, yet strict_kb differs from strict")
    score_extra = kb_score.cpu_median / plain_score.cpu_median - 1
    run.print(f"   score_judgements, synthetic study at 0.3x paper 000's size ({len(mentions):,} mentions), 1,000 "
              f"resamples, median CPU of {runs}: without KB {plain_score.cpu_median:.2f} s, with --kb (entities "
              f"looked up + strict_kb) {kb_score.cpu_median:.2f} s (wall {plain_score.wall_median:.2f} / "
              f"{kb_score.wall_median:.2f} s): {100 * score_extra:+.1f}% (target <= 10%: "
              f"{_met(score_extra <= 0.10)}); strict_kb equals strict (no redirect among its links)")
    run.headline(f"kb cost: flags pipeline {100 * extra:+.1f}%, score_judgements {100 * score_extra:+.1f}% "
                 f"(<= 10%; median CPU of {runs} runs)")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sizes", default="60000,180000,600000",
                        help="page rows of the three dump sets (default 0.1%%, 0.3%%, 1%% of English's 60 M)")
    parser.add_argument("--runs", type=int, default=5, help="timed runs of the overhead comparisons")
    parser.add_argument("--keep", type=Path, default=None, help="folder for the dumps (kept; reused when there)")
    args = parser.parse_args()
    sizes = [int(s) for s in args.sizes.split(",")]
    with BenchRun("kb_bench") as run, tempfile.TemporaryDirectory() as scratch:
        folder = args.keep or Path(scratch)
        started = time.perf_counter()
        index = bench_build(run, folder, sizes)
        bench_lookup(run, index, folder)
        bench_overheads(run, folder, args.runs)
        run.print(f"bench parts took {time.perf_counter() - started:.0f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
