"""A summary holding what plain ``json.dumps`` writes as bare NaN / Infinity or cannot write, and a strict reader."""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np

#: what a summary can hold that plain ``json.dumps`` writes as bare NaN / Infinity or cannot write at all
HOSTILE = {"nan": math.nan, "inf": math.inf, "minus_inf": np.float64(-np.inf), "np_nan": np.float32("nan"),
           "np_int": np.int64(7), "np_float": np.float64(0.25), "np_bool": np.bool_(True),
           "nested": {"values": (np.int32(1), math.nan, 2.5)}}
EXPECTED = {"nan": None, "inf": None, "minus_inf": None, "np_nan": None, "np_int": 7, "np_float": 0.25,
            "np_bool": True, "nested": {"values": [1, None, 2.5]}}


def strict_load(path: Path) -> dict[str, object]:
    """``json.loads`` that refuses NaN, Infinity and -Infinity."""
    def refuse(constant: str) -> object:
        raise AssertionError(f"{path} holds {constant}, which is not JSON")

    loaded = json.loads(path.read_text(encoding="utf-8"), parse_constant=refuse)
    assert isinstance(loaded, dict)
    return loaded
