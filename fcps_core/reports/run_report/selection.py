"""The sections of a selection's report: verdict, judges, candidates, regime, cell
pressure, baselines."""

from __future__ import annotations

from ..explain import (answer_digits, display_family, drop_meaning, effective_judges_note, frontier_rows,
                       frontier_noise_note, limit_deploys_words, limit_span, non_monotone_note, risk_digits,
                       same_drop_choice, signed_change)
from ..names import FAMILY_NAMES, PATH_NAMES, count_of, family_name, judges_count
from ...wording import gain_text
from .blocks import Column, Figures, cards, esc, facts, fmt, interval, para, pct, table

#: candidates listed in the Candidates table (best held-out risk first)
TOP_CANDIDATES = 15
#: rows of a cell table printed (most frequent / first patterns); the rest are counted
MAX_CELL_ROWS = 60
#: near-duplicate judge pairs listed
MAX_PAIRS = 30


def selected_candidate(res: dict) -> dict:
    by_index = {c["index"]: c for c in res.get("candidates") or []}
    return by_index.get((res.get("selected") or {}).get("index"), {})


def verdict_section(res: dict, run: dict) -> str:
    from ..explain import verdict
    sel = res.get("selected") or {}
    try:
        text = verdict(res)
    except (KeyError, TypeError, ValueError, IndexError) as exc:
        text = f"(no verdict for this stored run: {type(exc).__name__} {exc})"
    paragraphs = text if isinstance(text, (list, tuple)) else [text]
    dr = res.get("deployed_risk") or {}
    # at the answer's decimals (4, more for a narrow interval), as the Select page's metrics: walk 7 read
    # "estimated MSE 0.00131 (95% interval 0.00108 to 0.00160)" above a card "0.0013 [0.0011 to 0.0016]"
    k = risk_digits(res)
    items = [("family", "deployed", f"{display_family(sel)} · K={sel.get('K')}"),
             ("val_mse", "held-out MSE", fmt(sel.get("val_mse"), k)),
             ("test_mse", "test MSE (T)", fmt(sel.get("test_mse")))]
    if dr:
        items.append(("deployed_risk", "deployed risk", f"{fmt(dr.get('estimate'), k)} [{interval(dr.get('ci'), k)}]"))
    items += [("menu_size", "menu size |C|", fmt(res.get("menu_size"))),
              ("choice", "choice rule", str(res.get("choice") or "-"))]
    from ..explain import deployed_judges
    judges = deployed_judges(res) if res.get("judges_report") else list(sel.get("judges") or [])
    return ("".join(para(p, "verdict") for p in paragraphs) + cards(items)
            + f'<p><b>Judges deployed ({len(judges)}, by contribution):</b> {esc(", ".join(judges))}</p>')


def frontier_section(res: dict, figs: Figures) -> str:
    """The frontier after the answer: risk against panel size (chart), and per distinct
    deployment its limit, judges used, risk, paired difference to the choice over all
    judges and estimate on new items. A run chosen under a budget shows its budget points
    instead (the deployed one among them), on the chart's cost axis."""
    frontier = res.get("frontier") or []
    budget = any(p.get("chosen") and p.get("constraint") == "budget" for p in frontier)
    points = [p for p in frontier if p.get("constraint") == ("budget" if budget else "max_judges")]
    if not points:
        return ""
    rows = []
    # the answer's decimals (4, more for a narrow interval), so the table shows what the answer and the note
    # below print (walk 7: 0.0013 in every row beside a note comparing 0.00134 with 0.00131)
    k = max([4, *(answer_digits(p) for p in points)])
    # neighbouring limits deploying the same predictor with the same printed estimate share a row
    # (explain.frontier_rows, as the CLI and the Select page group them)
    for group in frontier_rows(res, "budget" if budget else "max_judges"):
        p, levels = group["point"], group["levels"]
        dr = p.get("deployed_risk") or {}
        limit = limit_span(levels, "budget" if budget else "max_judges")
        rows.append({"limit": limit, "used": len(p["judges"]), "family": display_family(p),
                     "val_risk": p["risk"], "diff": signed_change(p["diff_vs_best"]["estimate"], k),
                     "diff_ci": " to ".join(signed_change(v, k) for v in p["diff_vs_best"]["ci"]),
                     "deployed_risk": dr.get("estimate"), "selected": bool(p.get("chosen"))})
    note = non_monotone_note(res, budget=budget)
    if budget:
        out = [f"<h3>{'What each budget deploys' if note else 'What a smaller budget costs'} (the frontier)</h3>",
               para(f"What each budget per item deploys ({limit_deploys_words(res, budget=True)}; select --budget "
                    "C), from the same held-out predictions: its held-out risk, its paired difference to the choice "
                    "over all judges (95% interval) and its estimate on new items (bias-corrected for choosing under "
                    "that budget). Neighbouring budgets deploying the same predictor with the same estimate share a row.")]
        limit_column = Column("limit", "limit", "budget per item")
    else:
        # "what fewer judges cost" only where no looser limit does worse (the note below says where)
        out = [f"<h3>{'What each limit deploys' if note else 'What fewer judges cost'} (the frontier)</h3>",
               para(f"What a limit of k judges deploys (select --max-judges k): {limit_deploys_words(res)}, "
                    "from the same held-out predictions: its held-out risk, its paired difference to the choice over "
                    "all judges (95% interval) and its estimate on new items (bias-corrected for choosing under that "
                    "limit). Neighbouring panel sizes deploying the same predictor with the same estimate share a row.")]
        limit_column = Column("limit", "limit", "most judges")
    out.append(table(rows, [limit_column, Column("used", "used", "judges used"),
                            Column("family"), Column("val_risk", "val_risk", "held-out risk", digits=k),
                            Column("diff", "diff", "diff vs all", numeric=True),
                            Column("diff_ci", "diff_ci", "95% interval"),
                            Column("deployed_risk", "deployed_risk", "on new items", digits=k), Column("selected")],
                     highlight=lambda r: r["selected"]))
    if note:
        out.append(para(note))
    noise = frontier_noise_note(res, budget=budget)
    if noise:
        out.append(para(noise, "muted"))
    out.append(figs("frontier.frontier_figure", res.get("frontier"), by="cost" if budget else "judges",
                    objective=str((res.get("menu") or {}).get("objective") or "mse").upper(), names=FAMILY_NAMES,
                    monotone=not note))
    return "".join(out)


def judges_section(res: dict) -> str:
    rep = res.get("judges_report")
    if not rep:
        return para("This run stored no judge report (it was computed by an older fcps).", "muted")
    out = []
    eff = rep.get("effective_judges") or {}
    red = rep.get("redundancy") or {}
    out.append(cards([("n_deployable", "deployable labelled rows", fmt(rep.get("rows"))),
                      ("effective_judges", "effective independent judges", fmt(eff.get("value"), 1)),
                      ("pair", "near-duplicate pairs", fmt(red.get("n_pairs")))]))
    left_out = effective_judges_note(eff, len(rep.get("names") or rep.get("judges") or []))
    if left_out:
        out.append(para(f"Effective independent judges {left_out}.", "muted"))
    if rep.get("rows_note"):
        out.append(para(f"Measured on {rep['rows_note']}.", "muted"))
    contribution = rep.get("contribution") or {}
    deployed = {j["judge"] for j in contribution.get("judges") or []}
    judges = sorted(rep.get("judges") or [], key=lambda j: (j.get("brier_iso") is None, j.get("brier_iso") or 0))
    rows = [{**j, "deployed": j["judge"] in deployed} for j in judges]
    out.append("<h3>Each judge against the human labels</h3>")
    out.append(table(rows, [Column("judge"), Column("brier_iso", "brier", "Brier (isotonic)"),
                            Column("accuracy", digits=3), Column("auc", digits=3), Column("direction"),
                            Column("kappa", digits=3),
                            Column("coverage", show=pct), Column("parse_error_rate", "parse_errors", show=pct),
                            Column("missing_rate", header="missing", show=pct), Column("deployed")],
                     highlight=lambda r: r["deployed"]))
    if contribution.get("judges"):
        out.append(f"<h3>What each deployed judge contributes ({esc(display_family(res.get('selected') or {}))})</h3>")
        same = same_drop_choice(res)
        rows = [{**j, "shared": ", ".join(j.get("shared_with") or []) or "-", "drop_ci": interval(j.get("drop_ci"), 5),
                 "meaning": drop_meaning(j.get("drop_verdict") or j.get("drop_note") or "-", same.get(j["judge"], []))}
                for j in contribution["judges"]]
        rows.sort(key=lambda j: (j.get("drop_risk_change") is None, -(j.get("drop_risk_change") or 0)))
        out.append(table(rows,
                         [Column("judge"), Column("weight", header="signed weight"),
                          Column("weight_share", header="weight share", show=pct), Column("shared", "shared_with",
                                                                                        "shared with"),
                          Column("members"), Column("drop_risk_change", "drop_one", digits=5),
                          Column("drop_ci", "ci", "95% interval", numeric=True), Column("meaning", "drop_one",
                                                                                        "which way")]))
        drop = contribution.get("drop_one") or {}
        if drop.get("method"):
            out.append(para(f"Drop-one: {drop['method']}; above 0 dropping the judge raises the risk (it helps).",
                            "muted"))
        if contribution.get("drop_one_note"):
            out.append(para(f"Drop-one: {contribution['drop_one_note']}.", "muted"))
    if red.get("pairs"):
        out.append(f"<h3>Near-duplicate judges ({esc(red.get('rule'))})</h3>")
        pairs = [{"pair": " / ".join(map(str, p.get("judges") or [p.get("a"), p.get("b")])), **p}
                 for p in red["pairs"][:MAX_PAIRS]]
        if len(red["pairs"]) > MAX_PAIRS:
            out.append(para(f"The first {MAX_PAIRS} of {len(red['pairs']):,} pairs.", "muted"))
        out.append(table(pairs, [Column("pair"), Column("agreement"), Column("error_correlation", "error_corr")]))
    return "".join(out)


def candidates_section(res: dict, figs: Figures) -> str:
    cands = res.get("candidates") or []
    if not cands:
        return para("No candidates stored.", "muted")
    sel = res.get("selected") or {}
    members = {m.get("index") for m in sel.get("members") or []} | {sel.get("index")}
    ranked = sorted(cands, key=lambda c: (c.get("val_risk") is None, c.get("val_risk") or 0))
    top = ranked[:TOP_CANDIDATES]
    out = [para(f"{len(cands):,} candidates were compared on held-out rows (menu size |C| = {res.get('menu_size')}); "
                f"the {len(top)} with the lowest held-out risk, the deployed "
                f"{'one' if len(members - {None}) == 1 else 'ones'} highlighted:")]
    rows = [{**c, "judges": " > ".join(c.get("judges") or []), "selected": c["index"] in members} for c in top]
    k = risk_digits(res)                # the answer's decimals: a small MSE keeps its digits
    out.append(table(rows, [Column("index", "index", "#"), Column("family"), Column("path", "path", "path"),
                            Column("K"), Column("judges"), Column("val_mse", digits=k), Column("val_se", digits=k),
                            Column("test_mse", digits=k),
                            Column("H_K", digits=2), Column("unseen_val", show=pct), Column("V_cell"),
                            Column("selected")],
                     highlight=lambda r: r["selected"]))
    out.append(cards([("validation_scale", "validation scale", fmt(res.get("validation_scale"))),
                      ("theorem1_bound", "Theorem 1 bound", fmt(res.get("theorem1_bound")))]))
    from ..explain import tie_sentence
    ties = tie_sentence(res)
    if ties:
        out.append(para(ties))
    out.append(figs("selection.validation_risk_over_k", cands, selected=sel, names=FAMILY_NAMES,
                    path_names=PATH_NAMES, digits=k))
    return "".join(out)


def regime_section(res: dict, figs: Figures) -> str:
    rg = res.get("regime") or {}
    if not rg.get("quadrant"):
        return para("No regime call: the menu needs both a table-like and a scalar family.", "muted")
    out = [para(f"{rg['quadrant'].replace('_', ' ')}: {rg.get('description') or ''}", "verdict")]
    if rg.get("advice"):
        out.append(para(rg["advice"]))
    k = risk_digits(res)      # a gain of risks at the run's risk decimals (4 printed 0.0000 at MSE 0.0002)
    pairs = [("quadrant", "regime quadrant", rg["quadrant"].replace("_", " ")),
             ("interaction_gain", "interaction gain", gain_text(rg.get("interaction_gain"), k))]
    if rg.get("interaction_gain_ci"):
        pairs.append(("interaction_gain_ci", "interaction gain 95% interval",
                      " to ".join(gain_text(v, k) for v in rg["interaction_gain_ci"][:2])))
    pairs += [("table_pressure", "table pressure", fmt(rg.get("table_pressure"))),
              ("gain_threshold", "gain threshold", fmt(rg.get("gain_threshold"))),
              ("pressure_threshold", "pressure threshold", fmt(rg.get("pressure_threshold")))]
    if "determined" in rg:
        pairs.append(("determined", "determined", fmt(rg.get("determined"))))
    if rg.get("labels_to_resolve"):
        pairs.append(("labels_to_resolve", "labels to resolve", fmt(rg["labels_to_resolve"])))
    out.append(facts(pairs))
    if rg.get("gain_threshold") is not None and rg.get("pressure_threshold") is not None:
        out.append(figs(lambda: _plots().regime_map(_plots().regime_map_points(res, None),
                                                    gain_threshold=rg["gain_threshold"],
                                                    pressure_threshold=rg["pressure_threshold"])))
    return "".join(out)


def cells_table(cells: list[dict], columns: list[Column], total: int | None = None) -> str:
    shown = cells[:MAX_CELL_ROWS]
    total = len(cells) if total is None else total
    head = para(f"{len(shown):,} of {total:,} patterns shown." if total > len(shown) else
                f"{count_of(total, 'pattern')}.", "muted")
    return head + table(shown, columns, highlight=lambda r: bool(r.get("unseen")))


def cells_section(res: dict) -> str:
    """The cell-pressure audit of the stored cells, opened by one sentence saying whether
    table pressure applies to what the run deploys (table-like, scalar, or a tie average's
    table-like members): a scalar candidate's pattern cells are not shown as if they did."""
    from ..explain import named_pattern, pressure_applies
    from ...families import TABLE_LIKE
    c = selected_candidate(res)
    applies, why = pressure_applies(res, set(TABLE_LIKE))
    out = [para(why)]
    if c and c.get("family") not in TABLE_LIKE:
        out.append(para("The run stores the cells of its selected candidate only, which is scalar: no cell audit "
                        "applies (the dashboard's Cell-pressure audit shows the table-like candidates).", "muted"))
        return "".join(out)
    if c:
        n_m = (res.get("split") or {}).get("n_fit") or (res.get("split") or {}).get("n_M")
        hk_nm = (c["H_K"] / n_m) if c.get("H_K") is not None and n_m else None
        sel = res.get("selected") or {}
        if sel.get("members"):
            out.append(para(f"The deployed predictor averages {len(sel['members'])} statistically tied models; the cells "
                            f"below are those of the best one, {family_name(c.get('family'))} over {judges_count(c.get('K'))} "
                            f"(candidate #{c.get('index')})."))
        else:
            out.append(para(f"The deployed candidate's cells: {family_name(c.get('family'))} over {judges_count(c.get('K'))} "
                            f"(candidate #{c.get('index')})."))
        out.append(cards([("Q_K", "Q_K", fmt(c.get("Q_K"), 0)), ("S_K", "S_K", fmt(c.get("S_K"), 1)),
                          ("H_K", "H_K", fmt(c.get("H_K"), 2)), ("H_K/n_M", "H_K / n_M", fmt(hk_nm)),
                          ("unseen_val", "unseen rate", pct(c.get("unseen_val"))),
                          ("V_cell", "V_cell", fmt(c.get("V_cell"))), ("V_proxy", "V_proxy", fmt(c.get("V_proxy")))]))
    cells = res.get("cells") or []
    if not cells:
        out.append(para("No cells stored for this run.", "muted"))
        return "".join(out)
    judges = list((c or {}).get("judges") or [])
    cells = [{**cell, "pattern": named_pattern(cell.get("pattern"), judges)} for cell in cells]
    out.append(cells_table(cells, [Column("pattern"), Column("N_z"), Column("mean_label", header="mean label"),
                                    Column("prediction"), Column("freq_val", header="share of V", show=pct),
                                    Column("freq_test", header="share of T", show=pct),
                                    Column("unseen", "unseen_cell", "unseen")]))
    return "".join(out)


def baselines_section(res: dict) -> str:
    from ..explain import PAIRED_BASIS, baseline_rows, comparison_basis
    base = res.get("baselines") or []
    if not base:
        return para("No baselines were scored for this run (run the selection with baselines on).", "muted")
    sel = res.get("selected") or {}
    k = risk_digits(res)                # the answer's decimals: a small MSE keeps its digits
    rows = [{**r, "ci": interval(r.get("ci"), k)} for r in sorted(baseline_rows(res), key=lambda r: (
        r.get("heldout") is None, r.get("heldout") or 0))]
    basis = comparison_basis(res)
    own = fmt(sel.get('val_risk', sel.get('val_mse')), k)
    if basis is None:
        text = para(f"Fixed recipes scored on the same held-out rows as the selection (its held-out risk {own}). The "
                    "difference (recipe - selection) is paired over bootstrap draws; a positive difference means the "
                    "selection is better; an interval that contains 0 is no clear difference.")
    else:
        text = para(f"Fixed recipes scored on the same rows as the selection. The difference (recipe - selection) is "
                    f"{PAIRED_BASIS}: it is the recipe's out-of-bag risk minus the selection's ({fmt(basis, k)}). A "
                    "positive difference means the selection is better; an interval that contains 0 is no clear "
                    f"difference. The held-out risks (the selection's own: {own}, optimistic because it won over the "
                    "menu) are shown beside them.")
    out_of_bag = [] if basis is None else [Column("out_of_bag", "val_risk", "out-of-bag risk", digits=k)]
    return text + table(rows, [Column("label", "baseline", "baseline"),
                               Column("heldout", "val_risk", "held-out risk", digits=k),
                               *out_of_bag, Column("diff", "diff_vs_selected", digits=k),
                               Column("ci", "ci", "95% interval", numeric=True)])


def _plots():
    """The selection's figure functions, imported when a figure is drawn (plotly is the
    ``[app]`` extra)."""
    from ...figures import selection
    return selection
