"""What a stored run is, in flat facts: its blocks' sizes under either protocol, its
parameters one level deep, everything that tells two runs apart (the results browser's diff)."""

from __future__ import annotations

from ..explain import display_family


def split_sizes(split: dict | None) -> list[dict]:
    """The run's blocks as rows (block, key, rows, groups, note), for both protocols: the
    split protocol's S, M, V and T (keys n_S ... n_T); under cross-fitting S, M and V are
    pooled, so the rows are each fold's fitting rows (n_fit), every deployable row, held out
    in turn (n_deployable), and T; never an S, M or V size that differs from the blocks drawn
    before pooling."""
    sp = split or {}
    groups = sp.get("groups") or {}
    if sp.get("protocol") == "crossfit":
        fold = f"per fold ({sp.get('folds')} folds x {sp.get('repeats')} repeats)"
        return [
            {"block": "each fold's fit", "key": "n_fit", "rows": sp.get("n_fit"), "groups": None,
             "note": f"each fold's fitting rows order the judges and fit the candidates, {fold}"},
            {"block": "S+M+V", "key": "n_deployable", "rows": sp.get("n_deployable"),
             "groups": groups.get("deployable"),
             "note": "every deployable labelled row (S, M and V pooled), held out in turn"},
            {"block": "T", "key": "n_T", "rows": sp.get("n_T"), "groups": groups.get("T"),
             "note": "research test block: audits the choice, never informs it"}]
    notes = {"S": "orders the judges into paths", "M": "fits each candidate aggregator",
             "V": "compares the candidates", "T": "research test block: audits the choice, never informs it"}
    return [{"block": b, "key": f"n_{b}", "rows": sp.get(f"n_{b}"), "groups": groups.get(b), "note": notes[b]}
            for b in "SMVT" if f"n_{b}" in sp]


def count_text(value) -> str:
    """A row count as a whole number. A cross-fitted fold size is a mean over folds: when
    not whole it reads "about 1,797" (a block holds whole rows; a decimal would look like
    a unit error)."""
    if value is None or (isinstance(value, float) and value != value):
        return "–"
    if isinstance(value, float) and value != int(value):
        return f"about {round(value):,}"
    return f"{int(value):,}"


def flat_params(params: dict | None) -> dict:
    """A run's parameters one level deep: a nested dict of plain values becomes
    ``outer.inner`` keys (``blocks.n_M``); anything deeper stays one value."""
    flat = {}
    for k, v in sorted((params or {}).items()):
        if isinstance(v, dict) and v and all(not isinstance(x, (dict, list)) for x in v.values()):
            flat.update({f"{k}.{kk}": vv for kk, vv in sorted(v.items())})
        else:
            flat[k] = v
    return flat


def run_facts(run: dict) -> dict:
    """What tells runs apart, one flat dict per run (for a side-by-side parameter diff): the
    run's identity, its headline result, its split sizes and every parameter."""
    res = run.get("result") or {}
    out = {"kind": run.get("kind"), "panel": run.get("panel_name"), "panel version": run.get("panel_version"),
           "status": run.get("status"), "seed": run.get("seed"), "fcps version": run.get("version"),
           "note": run.get("note")}
    if run.get("kind") == "select" and res:
        sel = res.get("selected") or {}
        dr = res.get("deployed_risk") or {}
        out.update({"protocol": res.get("protocol"), "choice rule": res.get("choice"),
                    # what was deployed, as the run lists name it ("average of N models", its judges)
                    "deployed family": display_family(sel), "judges called (K)": sel.get("K"),
                    "held-out MSE": sel.get("val_mse"), "test MSE (T)": sel.get("test_mse"),
                    "deployed risk": dr.get("estimate"), "menu size |C|": res.get("menu_size"),
                    "judges": ", ".join(sel.get("judges") or [])})
        out.update({s["key"]: s["rows"] for s in split_sizes(res.get("split"))})
    elif run.get("kind") == "audit" and res:
        out.update({"audit status": res.get("status"), "cell pressure": res.get("pressure"),
                    "traffic rows": res.get("rows")})
    out.update({f"param: {k}": v for k, v in flat_params(run.get("params")).items()})
    return out
