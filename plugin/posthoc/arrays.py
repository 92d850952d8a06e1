"""The numpy array types of the project's signatures, one name a dtype (``numpy.typing``, checked by ``mypy --strict``).

Names say what the elements are, not how the code got them:

``Floats``
    ``float64``: rates, weights, bootstrap samples, interval ends, z-values.
``Ints``
    ``intp``: integer codes, row positions, offsets and counts. ``np.argsort``, ``np.flatnonzero``,
    ``np.bincount`` give ``intp``; the arrays the code makes as ``int64`` are the same dtype on the 64-bit
    platforms the project runs on, and numpy's stubs accept an ``int64`` array where ``intp`` is asked (not
    the other way round), so one name serves both.
``Bools``
    ``bool_``: masks and flags.
``Strings``
    ``str_``: numpy's own fixed-width text (``<U``), as ``np.select`` of letters makes.
``Objects``
    ``object_``: strings and mixed values taken from a pandas column (``to_numpy()`` of a text column).
``Values``
    any dtype: a function that only moves elements (takes, concatenates, compares for equality).
"""

from __future__ import annotations

from typing import TypeAlias

import numpy as np
import numpy.typing as npt

Floats: TypeAlias = npt.NDArray[np.float64]
Ints: TypeAlias = npt.NDArray[np.intp]
Bools: TypeAlias = npt.NDArray[np.bool_]
Strings: TypeAlias = npt.NDArray[np.str_]
Objects: TypeAlias = npt.NDArray[np.object_]
Values: TypeAlias = npt.NDArray[np.generic]


def weighted_bincount(codes: Ints, weights: npt.ArrayLike, *, minlength: int = 0) -> Floats:
    """``np.bincount(codes, weights, minlength=minlength)``: the sum of ``weights`` per code, float64.

    numpy's stub types every ``bincount`` as ``intp``; with weights numpy returns float64, except for no codes
    at all (int64 zeros), which are made float64 zeros here (no copy otherwise), so the type holds.
    """
    sums = np.bincount(codes, weights, minlength=minlength)
    return sums.astype(np.float64, copy=False)
