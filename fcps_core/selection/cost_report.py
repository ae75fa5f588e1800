"""What the candidates cost to run: each candidate's cost and latency, the risk-cost
Pareto front, and the candidate ``cheapest_tied`` deploys (:mod:`.choice`: the cheapest
of the candidates within one paired, group-clustered SE of the lowest held-out risk on
the best candidate's own line)."""

from __future__ import annotations

import numpy as np

from ..data.judge_costs import judges_cost, pareto_front
from .choice import cost_order, line_ids, rule_pool, tie_break_order, tie_set


def cost_report(result) -> dict | None:
    """The ``costs`` section of a selection's dict (None without judge costs)."""
    costs = result.selector.judge_costs
    if not costs:
        return None
    cands = result.candidates
    per = [judges_cost(c.judges, costs) for c in cands]
    cost = np.array([p[0] for p in per])
    risk = np.array([c.val_risk for c in cands], dtype=float)
    deployed = result.selected_dict()
    dep_cost, dep_latency = judges_cost(deployed["judges"], costs)
    out = {"judge_costs": costs, "candidates": [{"index": c.index, "cost": p[0], "latency": p[1]}
                                                for c, p in zip(cands, per)],
           "pareto": pareto_front(risk, cost),
           "selected": {"cost": dep_cost, "latency": dep_latency},
           # the deployed choice as a point of the risk-cost plane (an average: its own risk)
           "selected_point": {"cost": dep_cost,
                              "risk": float(result.selected_val["val_" + result.selector.objective])
                              if result.members and result.selected_val else float(result.selected.val_risk)},
           "cheapest_tied": None,
           "tie_rule": "within one paired, group-clustered SE of the lowest held-out risk, on the best "
                       "candidate's line (same path, family and parameters; only K varies)"}
    heldout = getattr(result, "heldout", None)
    if heldout is not None:
        best, tied, means, se = tie_set(heldout.grouped(result.selector.objective), tie_break_order(cands))
        rank = cost_order(cands, costs)
        pool = rule_pool("cheapest_tied", tied, best, line_ids(cands))
        c = int(pool[np.argmin(rank[pool])])
        out["cheapest_tied"] = {"index": c, "family": cands[c].family, "K": cands[c].K,
                                "judges": cands[c].judges, "cost": per[c][0], "latency": per[c][1],
                                "risk": float(means[c]), "diff": float(means[c] - means[best]),
                                "se": float(se[c]), "n_tied": int(len(tied)), "n_tied_on_line": int(len(pool)),
                                "best_index": best}
    return out
