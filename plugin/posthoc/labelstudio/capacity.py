"""How many annotators at once one Label Studio process on its embedded SQLite database takes.

SQLite lets one write at a time through; Label Studio 1.23 under ``label-studio start`` is one process. Measured
on this project's 2-core machine (issue 30) with Locust users working a study's projects the way annotators do
(log in, next task, submit the prediction's regions), on a server that also held the demo:

- 40 users, 30 s between tasks (1.3 submits a second, the pace of about 100 annotators at the paper's ~75 s a
  task): no error, Submit p95 640 ms;
- 10 users, 1 s between tasks (3.4 submits a second, about 250 annotators' pace): ``database is locked`` 500s on
  next-task (2 of 204), Submit p95 1.3 s, next-task p95 3.1 s (max 22 s).

So :data:`SQLITE_ANNOTATORS_AT_ONCE` = 100 is where a study is beyond SQLite with one process: ``posthoc ls
start --annotators N`` and ``posthoc study create`` (the plan's workers) say so and point at PostgreSQL
(``posthoc ls start --database postgresql``). Label Studio's own guidance is stricter (PostgreSQL from five
annotators at once); below 100 the figures above say SQLite still answers, only slower.
"""

from __future__ import annotations

__all__ = ["SQLITE_ANNOTATORS_AT_ONCE", "sqlite_load_warning"]

SQLITE_ANNOTATORS_AT_ONCE = 100


def sqlite_load_warning(annotators: int, *, engine: str) -> str | None:
    """A one-line warning when ``annotators`` working at once is beyond one Label Studio process on SQLite
    (``engine`` ``"sqlite"``, more than :data:`SQLITE_ANNOTATORS_AT_ONCE`); ``None`` otherwise (PostgreSQL, or
    few enough)."""
    if engine != "sqlite" or annotators <= SQLITE_ANNOTATORS_AT_ONCE:
        return None
    return (f"{annotators} annotators at once is beyond Label Studio on SQLite with one process (measured: "
            f"about {SQLITE_ANNOTATORS_AT_ONCE} annotators' pace answers, Submit p95 0.64 s; 250 annotators' pace "
            "gets 'database is locked' 500s): use PostgreSQL, `posthoc ls start --database postgresql` on a new "
            "data dir (docs/labelstudio.md, 'How many at once')")
