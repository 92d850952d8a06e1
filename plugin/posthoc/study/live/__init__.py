"""The live study: what Label Studio says happened while it runs (the webhook event store, progress, controls),
and how a study's projects are recognised among a server's (:mod:`~posthoc.study.live.projects`).

Reads the plan (:mod:`posthoc.study.plan`) and Label Studio's records (:mod:`posthoc.labelstudio.records`).
"""
