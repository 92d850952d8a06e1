"""Sequence effects (seed 004): does a worker's label depend on the label they gave the previous item?

- :mod:`.table`: the sequence table (``worker, sequence, item, position, label, gold``) and its readers.
- :mod:`.lag_model`: the lag-1 regression of seed 004 section 2 with the worker-bias control, clustered errors,
  worker subsets and position tertiles.
- :mod:`.continuous`: per-worker standardisation and scores after low / middle / high items (seed 004 section 3.3).
- :mod:`.audit`: were the orders really randomised per worker?
- :mod:`.simulate`: annotators with a known lag-1 effect, for tests and the demo.
"""

from posthoc.sequence.audit import OrderAudit, audit_orders
from posthoc.sequence.continuous import scores_after_previous, standardise_per_worker
from posthoc.sequence.lag_model import LagFit, fit_lag1, lag1_by_subset, lag1_by_tertile, lagged_design
from posthoc.sequence.table import (
    SEQUENCE_COLUMNS,
    read_sequence_csv,
    read_snow_rte,
    sequence_table_from_judgements,
    validate_sequence_table,
)

__all__ = [
    "SEQUENCE_COLUMNS",
    "LagFit",
    "OrderAudit",
    "audit_orders",
    "fit_lag1",
    "lag1_by_subset",
    "lag1_by_tertile",
    "lagged_design",
    "read_sequence_csv",
    "read_snow_rte",
    "scores_after_previous",
    "sequence_table_from_judgements",
    "standardise_per_worker",
    "validate_sequence_table",
]
