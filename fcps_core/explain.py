"""Plain-language verdicts from a selection's JSON contract (CLI, dashboard, reports).

The headline says what to deploy and how good it is, in words a practitioner can act on:
"Deploy ridge_iso over judges A, B, C (K=3 of 65): held-out MSE 0.142 ± 0.008, about
0.011 better than the best single judge (gpt-4: 0.153; 95% interval 0.004 to 0.018) and
tied with logistic over all judges. Estimated MSE on new items 0.147 (95% interval 0.139
to 0.155)." The details that follow name the statistical ties and the regime.

Every number carries its uncertainty, and a comparison is worded by its interval: the
selection is called *better* than a baseline only when the 95% interval of the paired
difference (baseline risk - selection risk) lies above 0, *worse* only when it lies below
0, and *tied* otherwise; a baseline without a paired interval is reported without a claim.
"""

from __future__ import annotations

import math

#: how many judge names the headline spells out before "and N more"
SHOWN_JUDGES = 6


def _f(v, digits: int = 3) -> str:
    """A number at ``digits`` decimals; "-" when missing or not a number (never "nan")."""
    return "-" if v is None or (isinstance(v, float) and not math.isfinite(v)) else f"{v:.{digits}f}"


def _digits(v: float | None) -> int:
    """Decimals that show at least two significant digits of a small difference (3 to 6)."""
    if v is None or v == 0 or not math.isfinite(v):
        return 3
    return max(3, min(6, 1 - math.floor(math.log10(abs(v)))))


def _names(items: list[str], limit: int = SHOWN_JUDGES) -> str:
    shown = list(items[:limit])
    if len(items) > limit:
        shown.append(f"{len(items) - limit} more")
    if len(shown) <= 1:
        return "".join(shown)
    return ", ".join(shown[:-1]) + " and " + shown[-1]


def deployed_name(selected: dict) -> str:
    if selected["family"] == "tie_average":
        fams = sorted({m["family"] for m in selected["members"]})
        return f"the average of {len(selected['members'])} tied candidates ({', '.join(fams)})"
    return f"{selected['family']} over {selected['K']} judge(s) ({selected['path']} path)"


def deployed_judges(d: dict) -> list[str]:
    """The deployed judges, largest weight share first where the result has the shares (an
    average of tied candidates lists its judges alphabetically otherwise), else path order."""
    judges = list(d["selected"].get("judges") or [])
    contrib = ((d.get("judges_report") or {}).get("contribution") or {}).get("judges") or []
    share = {j["judge"]: j.get("weight_share") for j in contrib}
    if judges and all(share.get(j) is not None for j in judges):
        judges.sort(key=lambda j: -share[j])
    return judges


def gain_text(v) -> str:
    """An interaction gain as every page shows it: signed, 4 decimals ("+0.0100")."""
    return "-" if v is None else f"{round(v, 4) + 0.0:+.4f}"      # + 0.0: never "-0.0000"


def pressure_text(v) -> str:
    """A table pressure as every page shows it: 3 decimals ("0.035")."""
    return "-" if v is None else f"{round(v, 3) + 0.0:.3f}"


def _same_key(c: dict) -> tuple:
    """What makes two candidates the same predictor: family, parameters and the judge set
    (the path only orders the judges)."""
    params = tuple(sorted((str(k), str(v)) for k, v in (c.get("params") or {}).items()))
    return c.get("family"), params, tuple(sorted(c.get("judges") or []))


def tie_summary(d: dict) -> dict:
    """The statistical ties, counted as they are listed.

    ``n_tied``: candidates within one paired SE of the deployed one (the result's count);
    ``same``: those that are the deployed predictor (or a member of a tie average) reached
    by another path: same family, parameters and judge set, identical held-out risk;
    ``listed``: the result's closest alternatives that are different predictors;
    ``unlisted``: the rest of the count (farther ones, or a listed family and judge order
    with other parameters)."""
    tie = d.get("tie") or {}
    n = int(tie.get("n_tied") or 0)
    sel = d.get("selected") or {}
    cands = d.get("candidates") or []
    by_index = {c.get("index"): c for c in cands}
    refs = [by_index.get(m.get("index"), m) for m in sel.get("members") or []] or [by_index.get(sel.get("index"), sel)]
    ref_keys = {_same_key(r): r.get("val_risk", r.get("val_mse")) for r in refs}
    ref_index = {r.get("index") for r in refs}

    def is_same(c: dict) -> bool:
        risk = ref_keys.get(_same_key(c), None)
        own = c.get("val_risk", c.get("risk"))
        return risk is not None and own is not None and abs(own - risk) <= 1e-12 * max(1.0, abs(risk))

    same = [c for c in cands if c.get("index") not in ref_index and is_same(c)][:n]
    same_index = {c.get("index") for c in same}
    listed = []
    for a in tie.get("alternatives") or []:
        c = by_index.get(a.get("index"))
        identical = a.get("index") in same_index or (
            c is None and abs(a.get("diff") or 0.0) <= 1e-12 and abs(a.get("se") or 0.0) <= 1e-12)
        if not identical:
            listed.append(a)
    return {"n_tied": n, "same": same, "listed": listed, "unlisted": max(0, n - len(same) - len(listed))}


def tie_sentence(d: dict) -> str:
    """One sentence on the statistical ties ('' without any)."""
    t = tie_summary(d)
    n = t["n_tied"]
    if not n:
        return ""
    head = f"{n} other candidate(s) are within one paired standard error of it"
    found = sorted({str(c.get("path")) for c in t["same"]})
    paths = _names(found, 4) + (" paths" if len(found) > 1 else " path")
    if len(t["same"]) == n:
        return (f"{head}, and all are the deployed predictor reached by another path ({paths}): the same family, "
                "parameters and judges, so no different predictor is tied.")
    parts = [f"{head}: the data cannot tell them apart"]
    if t["same"]:
        parts.append(f"{len(t['same'])} of them are the deployed predictor reached by another path ({paths})")
    names = list(dict.fromkeys(f"{a['family']} K={a['K']} ({a['path']} path)" for a in t["listed"]))
    if names:
        parts.append("e.g. " + _names(names, 3))
    return "; ".join(parts) + "."


def comparison(baseline: dict) -> str:
    """'better', 'worse', 'tied' (the 95% interval of the paired difference straddles 0) or
    'unpaired' (no interval: no claim)."""
    ci = baseline.get("ci")
    if baseline.get("diff_vs_selected") is None or not ci or ci[0] is None or ci[1] is None:
        return "unpaired"
    if ci[0] > 0:
        return "better"
    if ci[1] < 0:
        return "worse"
    return "tied"


def _objective(d: dict) -> str:
    obj = (d.get("menu") or {}).get("objective") or (d.get("deployed_risk") or {}).get("objective") or "mse"
    return str(obj)


def _heldout(d: dict) -> tuple[float | None, float | None]:
    """The deployed choice's own held-out risk and its standard error (None where the
    result does not carry one, e.g. the average of tied candidates)."""
    sel, obj = d["selected"], _objective(d)
    risk = sel.get(f"val_{obj}")
    se = None
    if sel["family"] != "tie_average":
        cand = next((c for c in d.get("candidates") or [] if c.get("index") == sel.get("index")), None)
        if cand is not None:
            risk = cand.get("val_risk", risk)
            se = cand.get("val_se")
    return risk, se


def _single_judge_clause(b: dict) -> str:
    who = f"the best single judge ({b['judge']}: {_f(b['risk'])}" if b.get("judge") else \
        f"the best single judge ({_f(b['risk'])}"
    status = comparison(b)
    if status == "unpaired":
        return f"against {who}; no paired interval, so no claim)"
    diff, (lo, hi) = b["diff_vs_selected"], b["ci"]
    k = _digits(diff)
    interval = f"95% interval of the difference {_f(lo, k)} to {_f(hi, k)}"
    if status == "better":
        return f"about {_f(diff, k)} better than {who}; {interval})"
    if status == "worse":
        return f"about {_f(-diff, k)} worse than {who}; {interval})"
    return f"statistically tied with {who}; difference {_f(diff, k)}, {interval})"


def _others_clause(others: list[dict]) -> str:
    """'better than A and B; tied with C; worse than D (by ...)' over the other fixed recipes."""
    by = {s: [b for b in others if comparison(b) == s] for s in ("better", "tied", "worse", "unpaired")}
    parts = []
    if by["better"]:
        parts.append("better than " + ("all of them" if len(by["better"]) == len(others) and len(others) > 1
                                       else _names([b["label"] for b in by["better"]], 8)))
    if by["tied"]:
        parts.append("tied with " + _names([b["label"] for b in by["tied"]], 8))
    for b in by["worse"]:
        k = _digits(b["diff_vs_selected"])
        parts.append(f"worse than {b['label']} (by {_f(-b['diff_vs_selected'], k)}, 95% interval "
                     f"{_f(-b['ci'][1], k)} to {_f(-b['ci'][0], k)})")
    if by["unpaired"]:
        parts.append("not compared (no paired interval) with " + _names([b["label"] for b in by["unpaired"]], 8))
    return "; ".join(parts)


def verdict_parts(d: dict) -> dict:
    """``headline`` (what to deploy, its risk, against what) and ``details`` (ties,
    regime, warnings), each a list of plain sentences."""
    sel = d["selected"]
    obj = _objective(d).upper()
    n_judges = len((d.get("panel") or {}).get("judges") or []) or None
    judges = deployed_judges(d)
    of = f" of {n_judges}" if n_judges else ""
    if sel["family"] == "tie_average":
        fams = sorted({m["family"] for m in sel.get("members") or []})
        what = (f"the average of {len(sel.get('members') or [])} statistically tied candidates "
                f"({', '.join(fams)}) over judges {_names(judges)} ({len(judges)}{of} judges)")
    else:
        path = f", {sel['path']} path" if sel.get("path") else ""
        what = f"{sel['family']} over judges {_names(judges)} (K={sel.get('K', len(judges))}{of}{path})"
    risk, se = _heldout(d)
    clauses = []
    if risk is not None and se is not None:     # an average of ties has no SE: the estimate below says it
        clauses.append(f"held-out {obj} {_f(risk)} ± {_f(1.959963984540054 * se, _digits(1.96 * se))} (95%)")
    base = [b for b in d.get("baselines") or [] if b.get("risk") is not None]
    single = next((b for b in base if b.get("name") == "best_single_judge"), None)
    if single:
        clauses.append(_single_judge_clause(single))
    headline = [f"Deploy {what}" + (": " + ", ".join(clauses) if clauses else "") + "."]
    others = [b for b in base if b is not single]
    if others:
        headline.append(f"Against the {'other ' if single else ''}fixed recipes on the same rows it is "
                        + _others_clause(others) + ".")
    dr = d.get("deployed_risk")
    if dr and dr.get("estimate") is not None:
        ci = dr.get("ci") or [None, None]
        headline.append(f"Estimated {obj} on new items {_f(dr['estimate'])} (95% interval {_f(ci[0])} to "
                        f"{_f(ci[1])}, {str(dr.get('method', '')).upper()} estimate"
                        + (f"; the held-out {_f(dr['optimistic'])} is optimistic because it won over "
                           f"{d.get('menu_size', 'many')} candidates" if dr.get("optimistic") is not None else "")
                        + ").")
    else:
        note = (d.get("choice_info") or {}).get("estimate_note")
        headline.append("No bias-corrected estimate of the risk on new items" + (f" ({note})." if note else "."))
    details = []
    worse = [b for b in base if comparison(b) == "worse"]
    if worse:
        best = min(worse, key=lambda b: b["risk"])
        details.append(f"A fixed recipe does better: consider deploying {best['label']} instead.")
    ties = tie_sentence(d)
    if ties:
        details.append(ties)
    rg = d.get("regime") or {}
    if rg.get("quadrant") == "undetermined":
        details.append("Regime undetermined: the interaction gain's 95% interval contains its threshold.")
    elif rg.get("quadrant"):
        lo, hi = rg.get("interaction_gain_ci") or (None, None)
        details.append(f"Regime: {rg['quadrant'].replace('_', ' ')} ({rg.get('description', '')}; interaction gain "
                       f"{gain_text(rg['interaction_gain'])}"
                       + (f", 95% interval {gain_text(lo)} to {gain_text(hi)}" if lo is not None else "") + ").")
    return {"headline": headline, "details": details}


def verdict(d: dict) -> str:
    """One paragraph: what to deploy, how good it is likely to be, against what."""
    parts = verdict_parts(d)
    return " ".join(parts["headline"] + parts["details"])


def _bin_words(value: str) -> str:
    """One judge's output in a pattern as a phrase after the judge's name: a continuous
    judge's bin (">=0.851", "<2", "[0,0.00118)") reads as a comparison or a range, a
    category as "= A"."""
    v = str(value)
    if v.startswith(">="):
        return f"≥ {v[2:]}"
    if v.startswith("<") and v != "<unseen>":
        return f"< {v[1:]}"
    if v.startswith("[") and v.endswith(")") and "," in v:
        lo, hi = v[1:-1].split(",", 1)
        return f"in [{lo}, {hi})"
    if v == "<unseen>":
        return "an output calibration never saw"
    return f"= {v}"


def named_pattern(pattern: str, judges: list[str]) -> str:
    """A joint output pattern ("A|B|>=0.851") with each judge's name ("judge1 = A · judge2 =
    B · judge3 ≥ 0.851"); the raw pattern when its parts do not match the judges one to one."""
    parts = str(pattern).split("|")
    if len(parts) != len(judges):
        return str(pattern)
    return " · ".join(f"{j} {_bin_words(p)}" for j, p in zip(judges, parts))


def pressure_applies(d: dict, table_like: set[str]) -> tuple[str, str]:
    """Whether table pressure and cell audits apply to what a selection deploys: ("all",
    "none" or "some", one sentence saying why). ``table_like`` names the table-like families
    (one value per output pattern); a tie average applies to its table-like members only."""
    sel = d.get("selected") or {}
    members = sel.get("members") or []
    fams = [m.get("family") for m in members] if members else [sel.get("family")]
    tables = [f for f in fams if f in table_like]
    what = deployed_name(sel)
    if len(tables) == len(fams):
        return "all", (f"The deployed predictor, {what}, is table-like: it fits one value per joint output pattern "
                       "of its judges, so unseen and thin cells are where it pays variance; the audit applies to it.")
    if not tables:
        return "none", (f"The deployed predictor, {what}, is scalar: it fits a few weights over the judges' outputs, "
                        "not one value per output pattern, so table pressure and cell audits do not apply to it. "
                        "The cells and pressures below are those of the table-like candidates it was compared with.")
    return "some", (f"The deployed predictor averages {len(fams)} candidates, {len(tables)} of them table-like "
                    f"({', '.join(sorted(set(tables)))}): table pressure and cell audits apply to those members "
                    "only; the scalar members fit weights, not cells.")
