"""Sequence effects (seed 004): does a worker's label depend on the label they gave the previous item?

- :mod:`.table`: the sequence table (``worker, sequence, item, position, label, gold``) and its readers.
- :mod:`.study`: a posthoc study's judgements as a task-level sequence table (one row a task, served order).
- :mod:`.lag_model`: the lag-1 regression of seed 004 section 2 with the worker-bias control, clustered errors,
  worker subsets and position tertiles; :mod:`.fitting`: its two regressions and their standard errors.
- :mod:`.randomisation`: the study-level test of an order effect by randomisation (each sequence reordered at
  random; the lag-1 score statistic's exact reference distribution), the report's test (issue 45).
- :mod:`.continuous`: per-worker standardisation and scores after low / middle / high items (seed 004 section 3.3).
- :mod:`.audit`: were the orders really randomised per worker?
- :mod:`.simulate`: annotators with a known lag-1 effect, for tests and the demo.
- :mod:`.labelstudio`: sequence tables from Label Studio exports of rating projects.
- :mod:`.report`: the report section (b1 per subset and tertile, a plot, Table 5); ``posthoc sequence`` writes
  it with its tables and ``summary.json`` (:mod:`posthoc.writers`, :mod:`posthoc.atomic`).
"""

from posthoc.sequence.audit import OrderAudit, audit_orders
from posthoc.sequence.continuous import scores_after_previous, standardise_per_worker
from posthoc.sequence.lag_model import LagFit, fit_lag1, lag1_by_subset, lag1_by_tertile, lagged_design
from posthoc.sequence.randomisation import OrderTest, order_randomisation_test
from posthoc.sequence.study import TASK_LABELS, sequence_table_from_judgements, task_outcomes
from posthoc.sequence.table import (
    SEQUENCE_COLUMNS,
    read_sequence_csv,
    read_snow_rte,
    validate_sequence_table,
)

__all__ = [
    "SEQUENCE_COLUMNS",
    "TASK_LABELS",
    "LagFit",
    "OrderAudit",
    "OrderTest",
    "audit_orders",
    "fit_lag1",
    "lag1_by_subset",
    "lag1_by_tertile",
    "lagged_design",
    "order_randomisation_test",
    "read_sequence_csv",
    "read_snow_rte",
    "scores_after_previous",
    "sequence_table_from_judgements",
    "standardise_per_worker",
    "task_outcomes",
    "validate_sequence_table",
]
