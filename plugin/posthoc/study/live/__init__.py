"""The live study: what Label Studio says happened while it runs (the webhook event store, progress, controls).

Reads the plan (:mod:`posthoc.study.plan`) and Label Studio's records (:mod:`posthoc.labelstudio.records`).
"""
