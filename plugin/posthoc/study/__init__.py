"""A study: its plan (:mod:`~posthoc.study.plan`), its planner (:mod:`~posthoc.study.planner`) and its live progress
(:mod:`~posthoc.study.live`). This face hands on the plan's main names.

Paper 000 section 2.1 (chunks of at most 300 characters, one worker per item, batches of 20 tasks with
one control task) and paper 004 section 4 (a separately randomised order for each worker).

>>> from posthoc.study import StudyConfig, plan_study
>>> from posthoc.study.plan.manifest import Manifest
>>> plan = plan_study(documents, mentions, StudyConfig(name="demo", seed=1))  # doctest: +SKIP
>>> Manifest.create("manifest.sqlite", plan)                                   # doctest: +SKIP
"""

from posthoc.study.plan.chunking import Chunking, chunk_documents
from posthoc.study.plan.config import StudyConfig, StudyInput, load_study_config, read_study_inputs, sample_study_config
from posthoc.study.plan.design import CONTROL_SYSTEM, StudyPlan, plan_study

__all__ = [
    "CONTROL_SYSTEM",
    "Chunking",
    "StudyConfig",
    "StudyInput",
    "StudyPlan",
    "chunk_documents",
    "load_study_config",
    "plan_study",
    "read_study_inputs",
    "sample_study_config",
]
