"""The jobs: what a study owner runs, composed from the rooms below (paper 000, sections 2.1 and 4).

- :mod:`~posthoc.jobs.setup` turns an opened study into one Label Studio project per worker, with accounts
  (:mod:`~posthoc.jobs.accounts`) and the record of what a run checked (:mod:`~posthoc.jobs.setup_record`); where
  and how it runs: :mod:`~posthoc.jobs.setup_options`;
- :mod:`~posthoc.jobs.score` is the export-and-score job behind ``posthoc score`` (its outputs:
  :mod:`~posthoc.jobs.score_outputs`, its report sections across papers: :mod:`~posthoc.jobs.study_sections`);
- :mod:`~posthoc.jobs.simulate` runs simulated annotators through the API, and :mod:`~posthoc.jobs.demo`
  is the one-command demo.

Jobs import the adapters (``posthoc.labelstudio``, ``posthoc.readers``) and the rooms (``study``, ``export``,
``metrics``, ``report``...); nothing below imports a job. The CLI (``posthoc.cli``) sits above.
"""
