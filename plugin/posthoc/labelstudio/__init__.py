"""Label Studio integration: a local server's lifecycle, users, study setup and simulated annotators.

Paper 000 (seeds/000), section 2.1 and Figure 2: annotators verify, edit or remove pre-filled entity
links in an unmodified open-source Label Studio. This package runs that Label Studio locally
(:mod:`~posthoc.labelstudio.server`), creates annotator accounts (:mod:`~posthoc.labelstudio.users`),
turns a study manifest into one project per worker (:mod:`~posthoc.labelstudio.setup`) and, for
the demo, simulates annotators with known behaviour (:mod:`~posthoc.labelstudio.simulate`).
"""
