"""The Select page's controls: a stored run from ``?run=N``, the blocks, the menu form, and
running the selection (stored as a run on a stored panel, kept as this session's)."""

from __future__ import annotations

import streamlit as st

from fcps_core.defaults import (CHOICES, DEFAULT_ALPHA, DEFAULT_CHOICE, DEFAULT_FOLDS, DEFAULT_PATHS,
                                DEFAULT_PROTOCOL, DEFAULT_REPEATS, DEFAULT_SPLIT, PROTOCOLS, TIE_AVERAGE)
from fcps_core.errors import FCPSError
from fcps_core.reports.glossary import help_text
from fcps_core.service.select import FAMILIES, PATH_RULES, SelectRequest, draw_blocks, refit_stored, run_select
from fcps_app.common import md, remember_selection, split_sizes_table
from fcps_app.glossary import table
from fcps_app.run_picker import read_link
from fcps_app.runs import selection_state


def open_stored_run(page: str = "select") -> None:
    """``?run=N``: make the stored selection run N this session's selection (once per N and
    page, so a new run on the page is not overwritten on the next rerun). The Select, Judges
    and Next judge pages open their links through here."""
    wanted = st.query_params.get("run")
    opened = st.session_state.setdefault("opened_runs", {})
    if not wanted or opened.get(page) == wanted:
        return
    opened[page] = wanted
    # the same checks and words as every other page's ?run= link
    run = read_link(("select",), hint="Run a selection below, or open a stored one from the Results browser.")
    if run is None:
        return
    try:
        state = selection_state(int(run["run_id"]))
    except FCPSError as exc:
        st.error(f"Cannot open run {run['run_id']}: {md(exc)}")
        return
    st.session_state["selection"] = state
    st.session_state["current_panel"] = state["label"]


def block_controls(panel) -> tuple:
    """The blocks (ratio, counts or the file's block column) and the seed, with the block
    sizes they give; returns (split, counts, seed) or stops the page on a bad choice."""
    mode = st.radio("Blocks", ["ratio", "counts"] + (["block column"] if panel.blocks is not None else []),
                    horizontal=True, help=help_text("block"))
    split, counts = None, None
    if mode == "ratio":
        split = st.text_input(
            "Block ratio S:M:V, or S:M:V:T", DEFAULT_SPLIT,
            help=f"The default is {DEFAULT_SPLIT} (S:M:V, no research test block). A fourth part, e.g. "
                 f"{DEFAULT_SPLIT}:1, reserves a research test block T that only audits the choice. "
                 + (help_text("block") or ""))
    elif mode == "counts":
        c = st.columns(4)
        n = panel.n_labelled
        counts = {"n_S": c[0].number_input("n_S", 1, value=max(1, n // 5), help=help_text("n_S")),
                  "n_M": c[1].number_input("n_M", 1, value=max(1, 2 * n // 5), help=help_text("n_M")),
                  "n_V": c[2].number_input("n_V", 1, value=max(1, n // 5), help=help_text("n_V")),
                  "n_T": c[3].number_input("n_T", 0, value=max(0, n // 5), help=help_text("n_T"))}
    seed = int(st.number_input("seed", 0, 1_000_000, 0, help="Seeds the blocks, the folds and the random path."))
    try:
        table(split_sizes_table(panel, draw_blocks(panel, split=split, counts=counts, seed=seed)))
    except FCPSError as exc:
        st.error(md(exc))
        st.stop()
    st.caption("Under the cross-fitted protocol (default) S, M and V are pooled: every labelled row outside T "
               "is used for fitting and, in other folds, for validation; T only audits.")
    return split, counts, seed


#: the choice rules in words (the form's values stay the library's and the command line's names)
#: (short: the box is a quarter of the form wide; the help says what each does)
CHOICE_WORDS = {"argmin": "lowest risk", "simplest_within_se": "simplest within 1 SE",
                TIE_AVERAGE: "average of ties", "cheapest_tied": "cheapest tied"}


def choice_words(choice: str) -> str:
    """A choice rule as the form shows it."""
    return CHOICE_WORDS.get(choice, choice)


def shown_limits(state: dict | None) -> tuple[int, float]:
    """(most judges, budget per item) the shown selection was chosen under (0 for none): the
    form starts from them, so after "Deploy at most 3 judges" it does not say "0 = no limit"
    beside a 3-judge result (walk 10)."""
    constraint = (((state or {}).get("dict") or {}).get("choice_info") or {}).get("constraint") or {}
    return int(constraint.get("max_judges") or 0), float(constraint.get("budget") or 0.0)


def menu_form(panel, limits: tuple[int, float] = (0, 0.0)) -> dict | None:
    """The menu of candidates and the protocol; the settings once "Run selection" is pressed.
    ``limits``: the form's starting most judges and budget (:func:`shown_limits`)."""
    with st.form("menu_form"):
        p1, p2, p3, p4 = st.columns(4)
        protocol = p1.selectbox("protocol", PROTOCOLS, index=PROTOCOLS.index(DEFAULT_PROTOCOL),
                                help=help_text("protocol"))
        choice = p2.selectbox("choice rule", CHOICES, index=CHOICES.index(DEFAULT_CHOICE), format_func=choice_words,
                              help=help_text("choice"))
        folds = p3.number_input("folds", 2, 20, DEFAULT_FOLDS, help="Grouped folds of the cross-fitted protocol.")
        repeats = p4.number_input("repeats", 1, 10, DEFAULT_REPEATS, help="Repeats of the grouped K-fold split.")
        families = st.multiselect("families", FAMILIES, default=list(FAMILIES), wrap=True,
                                  help=(help_text("family") or "") + " Table-like: table, backoff, residual; the rest "
                                                                     "are scalar.")
        c1, c2, c3 = st.columns(3)
        paths = c1.multiselect("path rules", PATH_RULES, default=list(DEFAULT_PATHS), wrap=True,
                               help=help_text("path"))
        k_max = c2.number_input("K max (0 = whole pool)", 0, len(panel.judges), 0,
                                help="largest prefix for scalar families (the library's default: the whole pool, so "
                                     "stackers over every judge are candidates); table-like families stop at 8")
        alpha = c2.number_input("table alpha", 0.0, 10.0, DEFAULT_ALPHA, step=0.1, help=help_text("alpha"))
        fallback = c2.selectbox("table fallback", ["global", "lower_prefix"], help=help_text("fallback"))
        objective = c3.selectbox("objective", ["mse", "nll"], help="The held-out loss candidates are compared on: "
                                 "squared error (MSE) or log loss (NLL).")
        guard = c3.selectbox("guard", ["none", "one_se"], help="one_se keeps the task-type prior family unless the "
                             "winner is clearly better (needs the argmin choice rule)")
        refit = c3.selectbox("deployment", ["frozen", "refit"], help="refit re-fits the chosen candidate on S+M+V")
        l1, l2 = st.columns(2)
        max_judges = l1.number_input("most judges deployed (0 = no limit)", 0, len(panel.judges),
                                     min(int(limits[0]), len(panel.judges)),
                                     help="The choice rule runs on the candidates calling at most this many judges "
                                          "(select --max-judges K); the frontier shows every limit.")
        budget = l2.number_input("budget per item (0 = no limit)", 0.0, None, float(limits[1]),
                                 help="Deploy judges whose costs sum to at most this per item (select --budget C); "
                                      "needs judge costs (above).")
        run = st.form_submit_button("Run selection", type="primary")
    if not run:
        return None
    return dict(families=families, k_max=int(k_max) or None, alpha=alpha, fallback=fallback, objective=objective,
                guard=None if guard == "none" else guard, refit=refit, protocol=protocol, choice=choice,
                folds=int(folds), repeats=int(repeats), paths=list(paths), max_judges=int(max_judges) or None,
                budget=float(budget) or None)


def run_menu(label: str, panel, split, counts, seed: int, costs: dict | None, menu: dict) -> None:
    """Run the selection with a progress bar, store and remember it; the address then opens it."""
    # the default path menu (None): with judge costs it also orders judges by information per cost
    options = {**menu, "paths": None if menu["paths"] == list(DEFAULT_PATHS) else menu["paths"]}
    if menu.get("budget") and costs is None:
        # the page's own control, not the command line's --judge-costs FILE the library's error names
        st.error("A budget needs every judge's cost: fill in the table under 'Judge costs (optional)' above "
                 "(0 for a free judge), or set the budget to 0.")
        st.stop()
    bar = st.progress(0.0, text="starting")
    try:
        outcome = run_select(SelectRequest(panel, split=split, counts=counts, seed=seed, options=options,
                                           judge_costs=costs,
                                           progress=lambda f, m: bar.progress(min(f, 1.0), text=md(m))))
    except FCPSError as exc:
        bar.empty()         # not left at "starting" above the error
        st.error(md(exc))
        st.stop()
    bar.empty()
    open_selection(label, outcome.result, outcome.predictor)


def keep_in_address(sel_state: dict | None, page: str) -> None:
    """The shown selection's stored run id in the address (``?run=N``), so a reload or a
    shared link opens the same selection; an unsaved one (uploaded panel) has none."""
    run_id = (sel_state or {}).get("run_id")
    if run_id is None:
        return
    if st.query_params.get("run") != str(run_id):
        st.query_params["run"] = str(run_id)
    st.session_state.setdefault("opened_runs", {})[page] = str(run_id)


def deploy_point(label: str, panel, state: dict, point: dict) -> None:
    """Deploy another frontier point: the shown selection rerun with the point's limit
    (fcps_core.service.frontier), stored and remembered like any selection."""
    from fcps_core.service.frontier import deploy_frontier_point
    limit = {"max_judges": point["n_judges"]} if point.get("constraint") == "max_judges" else \
        {"budget": point["cost"]}
    bar = st.progress(0.0, text="starting")
    progress = lambda f, m: bar.progress(min(f, 1.0), text=md(m))        # noqa: E731
    try:
        result = state.get("result")
        if result is None:          # a stored run keeps its tables, not its models: refit it with the limit
            result, _ = rebuild_selection(int(state["run_id"]), panel, progress, overrides=limit)
        else:
            result = deploy_frontier_point(result, panel, progress=progress, **limit)
    except FCPSError as exc:
        st.error(md(exc))
        st.stop()
    bar.empty()
    open_selection(label, result)


def open_selection(label: str, result, predictor=None) -> None:
    """Remember a new selection (stored as a run), put its run in the address and rerun the
    page, so the answer and the frontier open it, above the form (drawn first)."""
    remember_selection(label, result, predictor)
    new_id = st.session_state["selection"].get("run_id")
    if new_id is not None:
        st.query_params["run"] = str(new_id)
        st.session_state.setdefault("opened_runs", {})["select"] = str(new_id)
    st.rerun()


def rebuild_selection(run_id: int, panel, progress, overrides: dict | None = None):
    """A stored selection refitted from its stored settings (selector fields, blocks and
    seed), for the pages that need the live result (Next judge, drop-one changes): a stored
    run keeps its tables, not its fitted models. Returns (result, same) where ``same`` says
    whether the refit deploys what the stored run deploys (family, K, judges)."""
    from fcps_app.runs import stored_run
    return refit_stored(stored_run(int(run_id)), panel, progress, overrides)
