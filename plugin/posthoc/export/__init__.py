"""Label Studio exports -> the tidy judgements table (seed 000 section 2.1: verify / edit / remove).

:mod:`~posthoc.export.fetch` pulls snapshot exports of a study's projects (full predictions,
expanded users, drafts); :mod:`~posthoc.export.flatten` streams them task by task into judgement
rows joined with the study manifest; :mod:`~posthoc.export.checks` records everything left out and
why (skipped tasks, drafts, foreign annotators, tasks annotated twice, manual regions, moved spans);
:mod:`~posthoc.export.incremental` exports at scale (change signals, bounded concurrency, a judgement cache);
:mod:`~posthoc.export.synthetic` writes Label Studio-shaped exports of simulated decisions.
"""
