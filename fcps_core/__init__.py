"""fcps_core: Finite-Calibration Panel Selection.

Public API::

    import pandas as pd
    from fcps_core import read_panel, make_blocks, select
    result = select(pd.read_csv("data/llmbar.csv"))        # the default selection
    predictor = result.predictor()
    predictor.predict(new_items_frame)                       # one column per judge

    panel = read_panel("data/llmbar.csv")                    # or a DataFrame, wide or long
    blocks = make_blocks(panel, split="1:2:1:1", seed=0)
    result = select(panel, blocks, families=["table", "logistic"], protocol="split")
    result.selected, result.regime, result.predictor().save("model.json")

The names below load their modules on first use (PEP 562), so a command that only scores
traffic (``python -m fcps_core score``) never imports the selection engine, scikit-learn or
pandas.
"""

from __future__ import annotations

import importlib

from .version import __version__
from .errors import FCPSError, MenuError, PanelError, PredictorError, SplitError

#: public name -> (module, attribute)
_LAZY = {
    "read_panel": (".ingest", "load_panel"),     # the one panel reader, under its two documented names
    "load_panel": (".ingest", "load_panel"),
    "Panel": (".data.panel", "Panel"),
    "Blocks": (".data.splits", "Blocks"),
    "draw_blocks": (".data.splits", "draw_blocks"),
    "make_blocks": (".data.splits", "make_blocks"),
    "repeated_blocks": (".data.splits", "repeated_blocks"),
    "FCPSSelector": (".selection", "FCPSSelector"),
    "SelectionResult": (".selection", "SelectionResult"),
    "select": (".selection", "select"),
    "FCPSPredictor": (".deploy.predictor", "FCPSPredictor"),
    "sweep": (".paper.experiments", "calibration_growth"),    # the calibration-growth sweep
    "audit_traffic": (".deploy.audit", "audit_traffic"),
    "FAMILIES": (".families", "FAMILIES"),
    "REGISTRY": (".families", "REGISTRY"),
    "PATH_RULES": (".measures.judge_paths", "PATH_RULES"),
}


def __getattr__(name: str):
    if name in _LAZY:
        module, attr = _LAZY[name]
        value = getattr(importlib.import_module(module, __name__), attr)
        globals()[name] = value          # later lookups skip this function
        return value
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__():
    return sorted(set(globals()) | set(_LAZY))


__all__ = ["__version__", "FCPSError", "MenuError", "PanelError", "PredictorError", "SplitError",
           "read_panel", "load_panel", "Panel", "Blocks", "draw_blocks", "make_blocks", "repeated_blocks",
           "FCPSSelector", "SelectionResult", "select", "sweep", "FCPSPredictor", "audit_traffic",
           "FAMILIES", "REGISTRY", "PATH_RULES"]
