"""The plan of a study: configuration, chunking, items, assignment, order, keys, the manifest that keeps it, and
where an estimate of it is kept beside it (:mod:`~posthoc.study.plan.estimate_file`).

Paper 000 section 2.1 (chunks of at most 300 characters, one worker per item, batches of 20 tasks with one
control task) and paper 004 section 4 (a separately randomised order for each worker). Imports nothing of
the planner (:mod:`posthoc.study.planner`) or the live study (:mod:`posthoc.study.live`).
"""
