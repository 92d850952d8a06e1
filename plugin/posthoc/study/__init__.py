"""A study: its plan (:mod:`~posthoc.study.plan`), its planner (:mod:`~posthoc.study.planner`) and its live progress
(:mod:`~posthoc.study.live`). This face hands on the plan's main names.

Paper 000 section 2.1 (chunks of at most 300 characters, one worker per item, batches of 20 tasks with
one control task) and paper 004 section 4 (a separately randomised order for each worker).

>>> from posthoc.study import StudyConfig, plan_study
>>> from posthoc.study.plan.manifest import Manifest
>>> plan = plan_study(documents, mentions, StudyConfig(name="demo", seed=1))  # doctest: +SKIP
>>> Manifest.create("manifest.sqlite", plan)                                   # doctest: +SKIP

The names are imported at their first use (PEP 562 ``__getattr__``): every ``posthoc.study.*`` import runs this
file, and the plan's modules import pandas, which a periodic ``posthoc score`` that finds nothing new never needs
(issue 24).
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from posthoc.study.plan.chunking import Chunking, chunk_documents
    from posthoc.study.plan.config import (
        StudyConfig,
        StudyInput,
        load_study_config,
        read_study_inputs,
        sample_study_config,
    )
    from posthoc.study.plan.control_tasks import CONTROL_SYSTEM
    from posthoc.study.plan.design import StudyPlan, plan_study

#: public name -> the module that defines it
_HOMES = {
    "CONTROL_SYSTEM": "posthoc.study.plan.control_tasks",
    "Chunking": "posthoc.study.plan.chunking",
    "StudyConfig": "posthoc.study.plan.config",
    "StudyInput": "posthoc.study.plan.config",
    "StudyPlan": "posthoc.study.plan.design",
    "chunk_documents": "posthoc.study.plan.chunking",
    "load_study_config": "posthoc.study.plan.config",
    "plan_study": "posthoc.study.plan.design",
    "read_study_inputs": "posthoc.study.plan.config",
    "sample_study_config": "posthoc.study.plan.config",
}

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


def __getattr__(name: str) -> object:
    """A public name, imported from its module at its first use (then kept in this module's namespace)."""
    home = _HOMES.get(name)
    if home is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(home), name)
    globals()[name] = value
    return value
