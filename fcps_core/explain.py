"""Plain-language verdicts from a selection's JSON contract (CLI, dashboard, reports).

Every verdict carries its uncertainty: the deployed-risk estimate with its interval, the
paired comparison with the best baseline, and the statistical tie when there is one.
"""

from __future__ import annotations


def _f(v, digits: int = 4) -> str:
    return "-" if v is None else f"{v:.{digits}f}"


def deployed_name(selected: dict) -> str:
    if selected["family"] == "tie_average":
        fams = sorted({m["family"] for m in selected["members"]})
        return f"the average of {len(selected['members'])} tied candidates ({', '.join(fams)})"
    return f"{selected['family']} over {selected['K']} judge(s) ({selected['path']} path)"


def verdict(d: dict) -> str:
    """One paragraph: what to deploy, how good it is likely to be, against what."""
    sel = d["selected"]
    judges = sel["judges"]
    shown = ", ".join(judges[:6]) + (f" and {len(judges) - 6} more" if len(judges) > 6 else "")
    words = [f"Deploy {deployed_name(sel)} using {shown}."]
    dr = d.get("deployed_risk")
    if dr:
        words.append(f"Expected {dr['objective'].upper()} on new items: {_f(dr['estimate'])} "
                     f"(95% interval {_f(dr['ci'][0])} to {_f(dr['ci'][1])}, {dr['method'].upper()} estimate; "
                     f"the winner's own held-out risk {_f(dr.get('optimistic'))} is optimistic).")
    base = [b for b in d.get("baselines") or [] if b.get("diff_vs_selected") is not None]
    if base:
        best = min(base, key=lambda b: b["risk"])
        lo, hi = best["ci"]
        if lo > 0:
            cmp = f"better than {best['label']} by {_f(best['diff_vs_selected'])} (95% interval {_f(lo)} to {_f(hi)})"
        elif hi < 0:
            cmp = (f"worse than {best['label']} by {_f(-best['diff_vs_selected'])} (95% interval "
                   f"{_f(-hi)} to {_f(-lo)}): consider deploying that recipe")
        else:
            cmp = (f"statistically tied with the best fixed recipe, {best['label']} "
                   f"(difference {_f(best['diff_vs_selected'])}, 95% interval {_f(lo)} to {_f(hi)})")
        words.append(f"It is {cmp}.")
    tie = d.get("tie") or {}
    if tie.get("n_tied"):
        words.append(f"{tie['n_tied']} other candidate(s) are within one paired standard error: "
                     "the data cannot tell them apart.")
    return " ".join(words)
