import streamlit as st

from fcps_core.errors import FCPSError
from fcps_core.service.parsers import parse_budgets
from fcps_core.service.plan import allocation_text, sweep_plan
from fcps_core.service.reports import gain_text, pressure_text
from fcps_core.service.sweep import menu_families
from fcps_core.reports.glossary import help_text
from fcps_core.figures.selection import regime_map, regime_map_points
from fcps_core.figures.sweep import calibration_growth_risk
from fcps_core.figures.sweep import plan_curves, selected_k_over_budget, unseen_over_budget
from fcps_app.common import digest, figure_download, md, run_sweep, save_run
from fcps_app.glossary import glossary_expander, metric
from fcps_app.run_picker import SESSION, companion, pick_run

st.title("Regime map")
st.markdown("Where does the panel sit? **Interaction gain** = held-out risk of the best scalar candidate "
            "minus the best table-like one (above 0: the joint table earns its cells); **table pressure** = "
            "H_K / n_M + unseen rate of that table (high: too few labels per pattern). Hover a metric or "
            "open the glossary at the bottom for every symbol.")
picked = pick_run("regime", ("sweep", "select"), empty="Run a selection on the Select page, or a calibration-growth "
                 "sweep below, to place this panel on the map.")
label, panel = picked.label, picked.panel


def run_name(kind: str, run_id, why: str = "") -> str:
    word = "selection" if kind == "select" else "sweep"
    name = f"{word} run {run_id}" if run_id is not None else f"this session's unsaved {word}"
    return name + (f" ({why} {word} of this panel)" if why else "")


selection = sweep = None
shown = []
if picked.kind == "select":
    selection = picked.state["dict"]
    shown.append(run_name("select", picked.run_id))
    other, other_id, why = companion("sweep", label)
    if other:
        sweep = other["data"]
        shown.append(run_name("sweep", other_id, why))
elif picked.kind == "sweep":
    sweep = picked.state["data"]
    shown.append(run_name("sweep", picked.run_id))
    other, other_id, why = companion("select", label)
    if other:
        selection = other["dict"]
        shown.append(run_name("select", other_id, why))
if shown:
    missing = "sweep" if picked.kind == "select" else "selection"
    st.caption("Shown: " + " and ".join(shown) + "."
               + (" Pick the second run in the picker to make it the one in the address." if len(shown) > 1 else
                  f" No {missing} on this panel yet: "
                  + ("run one below to add the sweep points." if missing == "sweep"
                     else "run one on the Select page to add the selection point.")))

points = regime_map_points(selection, sweep)
rg = (selection or {}).get("regime") or {}
if rg.get("quadrant") == "undetermined":
    st.warning(rg["advice"])
elif rg.get("quadrant"):
    lo, hi = rg.get("interaction_gain_ci") or (None, None)
    m = st.columns(3)
    metric(m[0], "quadrant", rg["quadrant"].replace("_", " "), label="regime quadrant",
           extra="Decided from the selection's held-out (validation) risks.")
    metric(m[1], "interaction_gain", gain_text(rg["interaction_gain"]), label="interaction gain",
           extra=(f"95% interval {gain_text(lo)} to {gain_text(hi)}; " if lo is not None else "")
           + f"the map's horizontal line is at {rg.get('gain_threshold', 0.001):g}.")
    metric(m[2], "table_pressure", pressure_text(rg["table_pressure"]), label="table pressure",
           extra=f"The map's vertical line is at {rg.get('pressure_threshold', 0.1):g}.")
    st.info(f"**{rg['quadrant'].replace('_', ' ')}**: {rg['advice']}")
if points:
    g, p = (points[0].get("gain_threshold", 0.001), points[0].get("pressure_threshold", 0.1))
    fig = regime_map(points, gain_threshold=g, pressure_threshold=p)
    st.plotly_chart(fig)
    figure_download(fig, "regime-map")
    lines = []
    if selection and rg.get("quadrant"):
        lines.append("**Selection point** (and the small markers, its other table-like candidates): "
                     "**validation risk**, i.e. the held-out (cross-fitted) rows the selector compared "
                     "candidates on. This is what decided the verdict above.")
    if sweep:
        lines.append(f"**Sweep points** (n_M = ...): mean **test risk** on the research test block T over "
                     f"{(sweep.get('settings') or {}).get('splits', '?')} splits, at each calibration budget; "
                     "table pressure is the table menu's mean V_proxy. An audit of how the verdict moves with "
                     "labels, never an input to a choice.")
    if len(lines) == 2:
        lines.append("The two kinds of point use different rows (validation vs test): compare points of one "
                     "kind with each other, not across kinds.")
    st.caption("  \n".join(lines))
elif picked.state is not None:
    st.info("This run has nothing to place on the map (no regime verdict, no table and scalar menus); run a "
            "selection with table-like and scalar families, or a sweep below.")

st.subheader("Calibration growth")
with st.form("sweep_form"):
    c1, c2, c3 = st.columns(3)
    budgets = c1.text_input("n_M budgets", "25,50,100,200", help=help_text("n_M"))
    splits = c1.number_input("splits", 2, 100, 10, help="Grouped random splits per budget (more: tighter bands).")
    n_select = c2.number_input("n_S", 1, value=max(1, panel.n_labelled // 8), help=help_text("n_S"))
    n_val = c2.number_input("n_V", 1, value=max(1, panel.n_labelled // 8), help=help_text("n_V"))
    n_test = c3.number_input("n_T", 1, value=max(1, panel.n_labelled // 4), help=help_text("n_T"))
    k_max = c3.number_input("K max", 1, len(panel.judges), min(len(panel.judges), 7), help=help_text("K"))
    menu = st.multiselect("families", menu_families("full"), default=list(menu_families("full")), help=help_text("family"))
    go = st.form_submit_button("Run sweep", type="primary")
if go:
    bar = st.progress(0.0, text="starting")
    try:
        data = run_sweep(panel, parse_budgets(budgets, "the 'n_M budgets' control"),
                         lambda f, m: bar.progress(min(f, 1.0), text=md(m)), n_select=int(n_select),
                         n_val=int(n_val), n_test=int(n_test), splits=int(splits), families=menu,
                         k_max=int(k_max), workers=1)
    except (FCPSError, ValueError) as exc:
        st.error(md(exc))
        st.stop()
    run_id = save_run("sweep", label, data)
    st.session_state["sweep"] = {"label": label, "data": data.to_dict(), "run_id": run_id}
    # the new sweep is the page's run (and the address's, when it was stored)
    st.session_state.setdefault("viewed_runs", {})[(label, "regime")] = \
        run_id if run_id is not None else SESSION + "sweep"
    if run_id is not None:
        st.query_params["run"] = str(run_id)
    st.rerun()
if sweep:
    cells = sweep["cells"]
    st.caption("Risks over budget are mean **test risks** on the research test block over splits (bands: 95% "
               "intervals, mean ± 1.96 standard errors over splits).")
    k_max = (sweep.get("settings") or {}).get("k_max")
    for fig, name in ((calibration_growth_risk(cells), "risk-over-budget"),
                      (selected_k_over_budget(cells, k_max=k_max), "selected-K"),
                      (unseen_over_budget(cells), "unseen-rate")):
        st.plotly_chart(fig)
        figure_download(fig, name)

    st.subheader("Plan the next labels")
    budgets = sweep.get("budgets") or [c["n_M"] for c in cells]
    delta = int(st.number_input("more calibration labels (delta)", min_value=0, value=int(max(budgets)),
                                step=max(1, int(max(budgets)) // 4),
                                help="How many more calibration labels to plan for; the curves extrapolate "
                                     "the sweep's validation risks to n_M + delta."))
    stored = sweep.get("plan") or {}
    if stored.get("delta") == delta:
        plan = stored
    else:   # refit for this delta (fast); the allocation does not depend on delta: keep the sweep's
        key = (digest([budgets, cells]), delta)
        cache = st.session_state.setdefault("plan_cache", {})
        if key not in cache:
            cache.clear()
            cache[key] = sweep_plan(sweep, delta=delta)
            if (stored.get("allocation") or {}).get("status") == "ok":
                cache[key]["allocation"] = stored["allocation"]
        plan = cache[key]
    if plan.get("status") != "ok":
        st.info(plan.get("answer") or plan.get("message"))
    else:
        st.markdown(f"**{plan['answer']}**")
        fig = plan_curves(plan)
        st.plotly_chart(fig)
        figure_download(fig, "plan-curves")
        alloc = allocation_text(plan.get("allocation"))
        if alloc:
            st.markdown(alloc)
        st.caption(f"Model: {plan['model']}. Bands: {plan['levels'][0]:.0%}-{plan['levels'][-1]:.0%} over "
                   f"{plan['n_boot']} split-bootstrap refits; crossover searched up to n_M = {plan['horizon']:,.0f}. "
                   "Only validation risks are fitted; the research test block informs no plan.")
        st.caption("Two kinds of risk on this page: the risk-over-budget chart above shows **test risk** on the "
                   "research test block T (what a deployment meets), the plan's curves **validation risk** of each "
                   "split's selected candidate (the held-out rows it was chosen on: the minimum over a menu, so "
                   "optimistic). At the same n_M the plan's values therefore sit below the chart's; compare the "
                   "plan's menus with each other, and read the chart above for the level to expect.")
glossary_expander()
