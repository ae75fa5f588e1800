"""Traffic given as a pandas DataFrame or a 2-D numpy array, for
:meth:`fcps_core.deploy.predictor.FCPSPredictor.predict` and :func:`fcps_core.deploy.audit.audit_traffic`.

The data is read by the traffic reader's own logic, not a second parser: each judge column
becomes the strings a panel file would hold, and :func:`fcps_core.ingest.build_panel`
builds the panel with the predictor's schemas (``FCPSPredictor.judge_schemas``), as
``score`` reads a traffic file; a judge with no output on any row counts as missing on every
row (:func:`fcps_core.deploy.traffic.load_with_empty_judges`, the monitoring case).

* **DataFrame** (wide): one column per judge of the predictor, named as the judge, plus an
  optional ``item_id`` and ``group_id`` column; other columns are ignored. Item ids are the
  ``item_id`` column's values, else ``1..n`` (as a file without an item column).
* **array**: shape ``(rows, judges)``, the columns in the predictor's ``judges`` order.

NaN, None and ``pd.NA`` are a missing output, like an empty cell (and so are the file's
missing markers ``NA``, ``null``, ...). Strings are read as file cells. A number or a
boolean in a text judge (pairwise, binary, categorical: the predictor's outputs are the
strings the calibration file held) is spelled as the calibration file most likely wrote
it: among its usual spellings (``1``, ``1.0`` for the number 1; ``true``, ``True``,
``TRUE`` for True) the one the predictor knows, else the first (``1``, ``0.5``,
``true``). So ``pd.read_csv(path)`` -- which types ``0``/``1`` as integers, a column with
a gap as floats, ``true``/``false`` as booleans -- predicts what ``score path`` predicts.
Rubric and continuous judges are read as numbers (a float's shortest exact spelling).
"""

from __future__ import annotations

import math
from typing import Mapping, Sequence

import numpy as np

from ..wording import count_of, noun_for
from ..errors import PredictorError
from ..data.panel import Panel
from .validate import short

#: the per-item columns a DataFrame may hold beside the judges
ITEM_COLUMN, GROUP_COLUMN = "item_id", "group_id"
_NUMERIC_SCHEMAS = ("rubric", "continuous")


def traffic_panel(data, judges: Sequence[str], schemas: Mapping[str, str],
                  known: Mapping[str, set] | None = None) -> Panel:
    """``data`` (a Panel, a pandas DataFrame or a 2-D numpy array) as the Panel ``score``
    would read, with the judges ``judges`` read with ``schemas``. ``known``: each text
    judge's outputs the predictor knows (to pick a number's spelling, see the module doc)."""
    if isinstance(data, Panel):
        return data
    import pandas as pd
    if isinstance(data, pd.DataFrame):
        columns = _frame_columns(data, judges)
    elif isinstance(data, np.ndarray):
        columns = _array_columns(data, judges)
    else:
        raise PredictorError(f"cannot score a {type(data).__name__}: give a Panel, a pandas DataFrame "
                             "(one column per judge) or a 2-D numpy array (columns in the predictor's judges order)")
    n = len(next(iter(columns.values()))) if columns else 0
    if n == 0:
        raise PredictorError("the traffic has no rows to score")
    cells = {}
    for name, values in columns.items():
        if name in (ITEM_COLUMN, GROUP_COLUMN):
            cells[name] = _spelled(values, None, set())
        else:
            cells[name] = _spelled(values, schemas.get(name), (known or {}).get(name, set()))

    from ..ingest.build import build_panel
    from ..ingest.files import DEFAULT_LIMITS
    from .traffic import load_with_empty_judges

    def load(wanted):
        use = list(judges) if wanted is None else list(wanted)
        keep = {k: v for k, v in cells.items() if k in use or k in (ITEM_COLUMN, GROUP_COLUMN)}
        return build_panel(keep, judges=use, item_column=ITEM_COLUMN, group_column=GROUP_COLUMN,
                           label_column="\x00label", block_column=None, schema=dict(schemas),
                           require_labels=False, name="traffic", limits=DEFAULT_LIMITS)

    panel, _ = load_with_empty_judges(load, list(judges), schemas, judges=list(judges))
    return panel


def _frame_columns(df, judges: Sequence[str]) -> dict:
    """The DataFrame's judge, item and group columns (object arrays), every judge present."""
    if df.columns.duplicated().any():
        dup = df.columns[df.columns.duplicated()][0]
        raise PredictorError(f"the DataFrame has two columns named {short(str(dup))}; name each column once")
    names = {str(c): c for c in df.columns}
    missing = [j for j in judges if j not in names]
    if missing:
        raise PredictorError(f"the DataFrame lacks judge {noun_for(len(missing), 'column')} the predictor needs: "
                             + ", ".join(short(m) for m in missing[:5])
                             + (f" and {len(missing) - 5} more" if len(missing) > 5 else ""))
    wanted = [c for c in (ITEM_COLUMN, GROUP_COLUMN) if c in names] + list(judges)
    return {c: df[names[c]].to_numpy(dtype=object) for c in wanted}


def _array_columns(arr: np.ndarray, judges: Sequence[str]) -> dict:
    if arr.ndim != 2 or arr.shape[1] != len(judges):
        raise PredictorError(f"an array of judge outputs must have shape (rows, {len(judges)}): one column "
                             f"per judge, in the predictor's judges order; got shape {arr.shape}")
    return {j: arr[:, k].astype(object) for k, j in enumerate(judges)}


def _spelled(values: np.ndarray, schema: str | None, known: set) -> np.ndarray:
    """Each value as the file cell it stands for ('' for a missing one), computed once per
    distinct value."""
    import pandas as pd
    codes, uniques = pd.factorize(np.asarray(values, dtype=object), use_na_sentinel=True)
    text = [_spell(u, schema, known) for u in uniques] + [""]
    return np.array(text, dtype=object)[codes]


def _spell(v, schema: str | None, known: set) -> str:
    if isinstance(v, str):
        return v
    if isinstance(v, (bool, np.bool_)):
        options = ["true", "True", "TRUE"] if v else ["false", "False", "FALSE"]
    elif isinstance(v, (int, np.integer)):
        options = [str(int(v)), repr(float(v))]
    elif isinstance(v, (float, np.floating)):
        x = float(v)
        if math.isnan(x):
            return ""
        if schema in _NUMERIC_SCHEMAS or not x.is_integer():
            return repr(x)
        options = [str(int(x)), repr(x)]
    else:
        return str(v)
    if schema in _NUMERIC_SCHEMAS:
        return options[0]
    return next((o for o in options if o in known), options[0])
