import streamlit as st

from fcps_core import FCPSError
from fcps_core.experiments import MENUS
from fcps_core.plots import calibration_growth_risk, regime_map, regime_map_points
from fcps_core.plots import plan_curves, selected_k_over_budget, unseen_over_budget
from fcps_core.planning import allocation_text, sweep_plan
from fcps_app.common import digest, figure_download, panel_picker, run_sweep, save_run

st.title("Regime map")
st.markdown("Where does the panel sit? **Interaction gain** = validation risk of the best scalar candidate "
            "minus the best table-like one; **table pressure** = H_K / n_M + unseen rate of that table.")
label, panel = panel_picker()

sel_state = st.session_state.get("selection")
selection = sel_state["dict"] if sel_state and sel_state["label"] == label else None
sweep_state = st.session_state.get("sweep")
sweep = sweep_state["data"] if sweep_state and sweep_state["label"] == label else None
points = regime_map_points(selection, sweep)
rg = (selection or {}).get("regime") or {}
if rg.get("quadrant") == "undetermined":
    st.warning(rg["advice"])
elif rg.get("quadrant"):
    lo, hi = rg.get("interaction_gain_ci") or (None, None)
    st.info(f"**{rg['quadrant'].replace('_', ' ')}**: interaction gain {rg['interaction_gain']:+.4f}"
            + (f" (95% interval {lo:+.4f} to {hi:+.4f})" if lo is not None else "")
            + f", table pressure {rg['table_pressure']:.3f}. {rg['advice']}")
if points:
    g, p = (points[0].get("gain_threshold", 0.001), points[0].get("pressure_threshold", 0.1))
    fig = regime_map(points, gain_threshold=g, pressure_threshold=p)
    st.plotly_chart(fig)
    figure_download(fig, "regime-map")
    st.caption("Sweep points use mean test risks over splits (a research audit); the selection point uses validation only.")
else:
    st.info("Run a selection on the Select page, or a calibration-growth sweep below, to place this panel on the map.")

st.subheader("Calibration growth")
with st.form("sweep_form"):
    c1, c2, c3 = st.columns(3)
    budgets = c1.text_input("n_M budgets", "25,50,100,200")
    splits = c1.number_input("splits", 2, 100, 10)
    n_select = c2.number_input("n_S", 1, value=max(1, panel.n_labelled // 8))
    n_val = c2.number_input("n_V", 1, value=max(1, panel.n_labelled // 8))
    n_test = c3.number_input("n_T", 1, value=max(1, panel.n_labelled // 4))
    k_max = c3.number_input("K max", 1, len(panel.judges), min(len(panel.judges), 7))
    menu = st.multiselect("families", MENUS["full"], default=list(MENUS["full"]))
    go = st.form_submit_button("Run sweep", type="primary")
if go:
    bar = st.progress(0.0, text="starting")
    try:
        data = run_sweep(panel, [int(b) for b in budgets.split(",") if b.strip()],
                         lambda f, m: bar.progress(min(f, 1.0), text=m), n_select=int(n_select),
                         n_val=int(n_val), n_test=int(n_test), splits=int(splits), families=menu,
                         k_max=int(k_max), workers=1)
    except (FCPSError, ValueError) as exc:
        st.error(str(exc))
        st.stop()
    run_id = save_run("sweep", label, data)
    st.session_state["sweep"] = {"label": label, "data": data.to_dict(), "run_id": run_id}
    st.rerun()
if sweep:
    cells = sweep["cells"]
    for fig, name in ((calibration_growth_risk(cells), "risk-over-budget"),
                      (selected_k_over_budget(cells), "selected-K"), (unseen_over_budget(cells), "unseen-rate")):
        st.plotly_chart(fig)
        figure_download(fig, name)

    st.subheader("Plan the next labels")
    budgets = sweep.get("budgets") or [c["n_M"] for c in cells]
    delta = int(st.number_input("more calibration labels (delta)", min_value=0, value=int(max(budgets)),
                                step=max(1, int(max(budgets)) // 4)))
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
