"""Column helpers shared by the study modules."""

from __future__ import annotations

import pandas as pd

from posthoc.arrays import Objects


def object_values(series: pd.Series) -> Objects:
    """A column as a numpy object array of Python values with ``None`` for missing ones.

    Iterating this is fast; iterating pandas' Arrow-backed string columns value by value is not.
    """
    values: Objects = series.to_numpy(dtype=object, na_value=None)  # type: ignore[call-overload]
    return values
