import streamlit as st

from fcps_core.errors import FCPSError
from fcps_core.service.parsers import parse_budgets
from fcps_core.service.reports import gap_verdict
from fcps_core.reports.glossary import help_text
from fcps_core.figures.sweep import calibration_growth_risk, gap_forest
from fcps_core.service.paper import make_regime
from fcps_app.common import STORED, figure_download, md, page_link, run_sweep, save_run
from fcps_app.glossary import glossary_expander
from fcps_app.run_picker import read_link
from fcps_app.runs import store_generated_panel, sweep_state

LAB_FAMILIES = ["table", "backoff", "mean_iso", "ridge_iso", "logistic"]

st.title("Synthetic lab")
st.markdown("Generate a controlled regime and watch the winner flip as calibration labels grow: additive "
            "targets stay scalar-favoured, interactions favour the joint table once cells are covered. "
            "Each generated panel is stored as a panel of its own (`lab-...`) and its sweep as a run of it: "
            "your own panels, selections and sweeps are never touched.")
with st.form("lab_form"):
    c1, c2, c3 = st.columns(3)
    regime = c1.selectbox("regime", ["additive", "mixed", "parity", "xor", "and", "strength"],
                          help="The target: additive (no interaction), parity / xor / and (planted "
                               "interactions), mixed, or strength (gamma blends additive into parity).")
    gamma = c1.slider("interaction strength gamma (strength)", 0.0, 1.0, 0.5,
                      help="Only the strength regime uses it: 0 additive, 1 pure 3-way parity.")
    rows = c2.number_input("rows", 500, 20_000, 2500, step=500, help="Items in the generated panel.")
    judges = c2.number_input("judges", 2, 10, 6, help="Pairwise judges in the generated panel.")
    budgets = c3.text_input("n_M budgets", "16,64,256,1024", help=help_text("n_M"))
    splits = c3.number_input("splits", 2, 50, 4, help="Grouped random splits per budget.")
    seed = c3.number_input("seed", 0, 10_000, 0, help="Seed of the generator and of the splits.")
    go = st.form_submit_button("Generate and sweep", type="primary")
if go:
    options = {"rows": int(rows), "judges": int(judges), "seed": int(seed), "gamma": float(gamma),
               "parity_order": min(int(judges), 6)}
    base = f"lab-{regime}-j{int(judges)}-r{int(rows)}-s{int(seed)}" + (f"-g{gamma:g}" if regime == "strength" else "")
    bar = st.progress(0.0, text="starting")
    fixed = max(50, int(rows) // 10)
    try:
        panel = make_regime(regime, **options)
        data = run_sweep(panel, parse_budgets(budgets, "the 'n_M budgets' control"),
                         lambda f, m: bar.progress(min(f, 1.0), text=md(m)), n_select=fixed, n_val=fixed,
                         n_test=2 * fixed, splits=int(splits), families=LAB_FAMILIES, seed=int(seed))
        name, version = store_generated_panel(panel, base, {"generator": "fcps_core.paper.synthetic.make_regime",
                                                            "regime": regime, **options, "from": "Synthetic lab"})
    except (FCPSError, ValueError) as exc:
        st.error(md(exc))
        st.stop()
    st.session_state.setdefault("panel_versions", {})[name] = version
    run_id = save_run("sweep", f"{STORED}{name}", data)
    # the lab's own state: the user's "sweep" (Regime map, Gaps) is left alone
    st.session_state["lab_sweep"] = {"label": f"{STORED}{name}", "data": data.to_dict(), "run_id": run_id,
                                     "panel": name}
    if run_id is not None:
        st.query_params["run"] = str(run_id)
    st.rerun()

lab = st.session_state.get("lab_sweep")
linked = read_link(("sweep",), hint="Generate a panel above.")
if linked and (lab is None or lab.get("run_id") != linked["run_id"]):
    if str(linked["panel_name"]).startswith("lab-"):       # a reload or a shared link of a lab run
        lab = {**sweep_state(linked["run_id"]), "panel": linked["panel_name"]}
        st.session_state["lab_sweep"] = lab
    else:
        st.warning(f"Run {linked['run_id']} is a sweep of panel '{md(linked['panel_name'])}', not a lab run; open it on "
                   "the Regime map or Scalar vs table gaps page.")
if lab:
    cells = lab["data"]["cells"]
    run_text = f"run {lab['run_id']}" if lab.get("run_id") is not None else "an unsaved run"
    st.success(f"Panel **{md(lab['panel'])}** (stored) and its sweep, {run_text}.")
    if lab.get("run_id") is not None:
        c1, c2 = st.columns(2)
        with c1:
            page_link("app_pages/regime.py", "Open this run on the Regime map", run_id=lab["run_id"],
                      icon=":material/map:")
        with c2:
            page_link("app_pages/gaps.py", "Open this run on Scalar vs table gaps", run_id=lab["run_id"],
                      icon=":material/compare_arrows:")
    winners = ", ".join(f"n_M={c['n_M']}: {gap_verdict(c.get('ci_low'), c.get('ci_high'))}" for c in cells)
    st.subheader("Winner by budget (paired 95% interval of table minus scalar test risk)")
    st.write(winners)
    for fig, name in ((calibration_growth_risk(cells), "lab-risk"), (gap_forest(cells), "lab-gaps")):
        st.plotly_chart(fig)
        figure_download(fig, name)
glossary_expander()
