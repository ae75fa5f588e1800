"""Selection: the menu and its fits, the protocols, the choice rules, the result.

* :mod:`.selector` -- :class:`FCPSSelector`: the settings, their checks, and the table of
  protocols (``PROTOCOLS``) its ``fit`` dispatches to.
* :mod:`.menu` -- the menu (paths x K x families) and one pass of fits over it.
* :mod:`.split_protocol` -- the paper's S/M/V protocol (paper section "FCPS Protocol").
* :mod:`.crossfit` -- the cross-fitted protocol over all deployable labels.
* :mod:`.choice` -- choice rules (argmin, simplest within one SE, the tie average, cheapest tied)
  with paired, group-clustered SEs; the deployed choice as a value.
* :mod:`.honesty` -- the bias-corrected deployed-risk estimate, baselines, ties, regime
  verdict, returned as values.
* :mod:`.baselines` -- fixed recipes on the same folds.
* :mod:`.result` -- the frozen :class:`SelectionResult` and :class:`Candidate`.
* :mod:`.views` -- distinct-row views of the blocks (per prefix and per path).
* :mod:`.path_fits` -- the scalar families fitted along each judge path, every prefix at once.
"""

from .result import Candidate, SelectionResult
from ..defaults import (CHOICES, DEFAULT_BOOTSTRAP, DEFAULT_CHOICE, DEFAULT_FOLDS, DEFAULT_PAIRWISE_K_MAX, DEFAULT_PATHS,
                        DEFAULT_PROTOCOL, DEFAULT_REPEATS, DEFAULT_TABLE_K_MAX)
from .selector import (ESTIMATES, PAPER_PROTOCOL, PROTOCOLS, FCPSSelector, MenuFit, deployable_label_scale,
                       progress_to_stderr, select)

__all__ = ["CHOICES", "DEFAULT_BOOTSTRAP", "Candidate", "SelectionResult", "DEFAULT_CHOICE", "DEFAULT_FOLDS",
           "DEFAULT_PAIRWISE_K_MAX", "DEFAULT_PATHS", "DEFAULT_PROTOCOL", "DEFAULT_REPEATS",
           "DEFAULT_TABLE_K_MAX", "ESTIMATES", "PAPER_PROTOCOL", "PROTOCOLS", "FCPSSelector", "MenuFit",
           "deployable_label_scale", "progress_to_stderr", "select"]
