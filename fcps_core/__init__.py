"""fcps_core: Finite-Calibration Panel Selection.

Public API::

    from fcps_core import read_panel, make_blocks, select
    panel = read_panel("data/llmbar.csv")
    blocks = make_blocks(panel, split="1:2:1:1", seed=0)
    result = select(panel, blocks, families=["table", "logistic"])
    result.selected, result.regime, result.predictor().save("model.json")
"""

from .version import __version__  # noqa: E402

from .errors import FCPSError, MenuError, PanelError, PredictorError, SplitError  # noqa: E402
from .ingest import load_panel  # noqa: E402
read_panel = load_panel   # the one panel reader, under its two documented names
from .panel import Panel  # noqa: E402
from .splits import Blocks, draw_blocks, make_blocks, repeated_blocks  # noqa: E402
from .selection import FCPSSelector, SelectionResult, select  # noqa: E402
from .predictor import FCPSPredictor  # noqa: E402
from .families import FAMILIES, REGISTRY  # noqa: E402
from .paths import PATH_RULES  # noqa: E402

__all__ = ["__version__", "FCPSError", "MenuError", "PanelError", "PredictorError", "SplitError",
           "read_panel", "load_panel", "Panel", "Blocks", "draw_blocks", "make_blocks", "repeated_blocks",
           "FCPSSelector", "SelectionResult", "select", "FCPSPredictor", "FAMILIES", "REGISTRY",
           "PATH_RULES"]
