"""Deploy another point of a selection's frontier.

The frontier (:mod:`fcps_core.selection.frontier`) shows what every limit deploys; deploying
one of them is the selection again with that limit (``select --max-judges K`` /
``--budget C``): the same selector settings and blocks, the choice rule restricted to the
admissible candidates, its own bias-corrected risk estimate, and a predictor to download or
store like any selection's.
"""

from __future__ import annotations

from dataclasses import replace


def deploy_frontier_point(result, panel, *, max_judges: int | None = None, budget: float | None = None,
                          progress=None):
    """The selection of ``result`` (its selector and blocks) rerun on ``panel`` with at
    most ``max_judges`` judges and / or ``budget`` per item; returns the new result."""
    selector = replace(result.selector, max_judges=max_judges, budget=budget, progress=progress)
    return selector.fit(panel, result.blocks)
