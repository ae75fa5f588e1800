"""JSON-ready values: NaN/inf become null, numpy scalars and arrays plain Python."""

from __future__ import annotations

import math

import numpy as np


def json_ready(obj):
    """NaN/inf -> None, numpy scalars -> Python, tuples and arrays -> lists, keys -> str."""
    if isinstance(obj, float):
        return obj if math.isfinite(obj) else None
    if isinstance(obj, dict):
        return {str(k): json_ready(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [json_ready(v) for v in obj]
    if isinstance(obj, np.ndarray):
        return [json_ready(v) for v in obj.tolist()]
    if isinstance(obj, np.generic):
        return json_ready(obj.item())
    return obj
