"""Planning the next labels from a calibration-growth sweep (issue "Plan the next decision").

* :mod:`.curves`      each menu's validation-risk curve a + b n_M^-c, split-bootstrap bands,
                      extrapolation and the table-like/scalar crossover budget.
* :mod:`.allocation`  splitting a total n_H over S/M/V by the fitted calibration curve and
                      the validation scale sqrt(log|C| / n_V).
* :mod:`.plan`        the assembled ``plan`` of ``sweep --json`` and its one-line answer.

(:mod:`.next_judge`, adding or dropping one judge, is imported from its module directly.)
"""

from .allocation import RATIOS, allocate, loss_sd_bound, predicted_risk, ratio_split, selection_penalty
from .curves import (HORIZON_FACTOR, LEVELS, MIN_BUDGETS, MenuCurve, crossover, extrapolate, fit_curves,
                     fit_power_law, power_law, risk_matrix)
from .plan import MODEL, allocation_text, crossover_text, plan_answer, sweep_plan

__all__ = ["HORIZON_FACTOR", "LEVELS", "MIN_BUDGETS", "MODEL", "RATIOS", "MenuCurve", "allocate",
           "allocation_text", "crossover", "crossover_text", "extrapolate", "fit_curves", "fit_power_law",
           "loss_sd_bound", "plan_answer", "power_law", "predicted_risk", "ratio_split", "risk_matrix",
           "selection_penalty", "sweep_plan"]
