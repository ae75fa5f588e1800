"""The planning workflows: which judge to add or drop next (``next-judge``, the Judges and
Next judge pages: :func:`fcps_core.planning.next_judge.plan_next_judge`) from a fresh
selection, a stored selection run or a live result, with optional unlabelled traffic; and
the labelling plan of a sweep (:func:`fcps_core.planning.sweep_plan`)."""

from __future__ import annotations

import os
from dataclasses import fields

from ..wording import count_of, noun_for
from ..errors import FCPSError


def plan_next_judge(source, *, traffic=None, progress=None):
    """The next-judge plan of ``source`` (a selection result or a deployment) with optional
    unlabelled ``traffic`` holding extra judge columns."""
    from ..planning.next_judge import plan_next_judge as plan
    return plan(source, traffic=traffic, progress=progress)


def sweep_plan(sweep: dict, **options) -> dict:
    """The labelling plan over a sweep's validation-risk curves (:func:`fcps_core.planning.sweep_plan`)."""
    from ..planning import sweep_plan as plan
    return plan(sweep, **options)


def allocation_text(allocation) -> str | None:
    from ..planning import allocation_text as text
    return text(allocation)


def select_deployment(panel, *, split=None, test_share=0.0, counts=None, seed: int = 0, paths=None,
                      families=None, k_max=None, objective="mse", protocol=None, choice=None, folds=None,
                      repeats=None, progress=None):
    """The deployment a fresh selection makes (no baselines, no risk estimate: the plan
    measures its own), for planning from a panel alone."""
    from ..defaults import DEFAULT_CHOICE, DEFAULT_PATHS
    from ..families import FAMILIES
    from ..planning.next_judge import deployment_of
    from ..selection import FCPSSelector
    from ..data.splits import make_blocks
    blocks = make_blocks(panel, split=split, test_share=test_share, counts=counts, seed=seed)
    options = {k: v for k, v in (("protocol", protocol), ("folds", folds), ("repeats", repeats)) if v is not None}
    selector = FCPSSelector(paths=paths or DEFAULT_PATHS, families=families or FAMILIES, k_max=k_max,
                            objective=objective, seed=seed, choice=choice or DEFAULT_CHOICE,
                            estimate="none", with_baselines=False, progress=progress, **options)
    return deployment_of(selector.fit(panel, blocks))


def run_id_of(ref: str, flag: str = "--from-run") -> int:
    """``run:N`` (any case, as ``show``/``export`` take it) or a bare ``N``."""
    text = ref.strip()
    text = text[4:] if text.lower().startswith("run:") else text
    try:
        return int(text)
    except ValueError:
        raise FCPSError(f"{flag} {ref!r} is not a run reference; write run:N (see: python -m fcps_core runs)") \
            from None


def deployment_from_run(store, run_id: int, panel, *, store_panel: str | None = None, seed: int | None = None,
                        split=None, test_share=None, counts=None):
    """The deployment a stored selection run made: its selector settings, its blocks (redrawn
    from the given ones, else from what the run stored, and checked against the stored sizes)
    and its deployed candidate (a tie average plans from its best member)."""
    from ..planning.next_judge import average_note, make_deployment
    from ..selection import FCPSSelector
    run = store.run(run_id)
    if run["kind"] != "select" or run["status"] != "done" or not run.get("result"):
        raise FCPSError(f"run {run_id} is a {run['status']} {run['kind']} run; --from-run needs a finished selection")
    if store_panel and store_panel != run["panel_name"]:
        raise FCPSError(f"run {run_id} was made on panel {run['panel_name']!r}, not {store_panel!r}")
    params = run["params"] or {}
    known = {f.name for f in fields(FCPSSelector)} - {"progress"}
    options = {k: v for k, v in params.items() if k in known}
    if seed is not None:
        options["seed"] = seed
    selector = FCPSSelector(**options)
    blocks = run_blocks(panel, params, run_id, seed=seed, split=split, test_share=test_share, counts=counts)
    sel = run["result"]["selected"]
    note = ""
    if sel.get("members"):
        best = sel["members"][0]
        note = average_note(len(sel["members"]), best["family"], int(best["K"]))
        risk = best.get("val_risk")
        sel = best
    else:
        risk = sel.get("val_" + selector.objective)
    missing = [j for j in sel["judges"] if j not in panel.judge_names]
    if missing:
        raise FCPSError(f"the panel lacks judge {noun_for(len(missing), 'column')} run {run_id} deployed: " + ", ".join(map(repr, missing)))

    def predictor():
        """The run's stored predictor (None for a run stored without one: the plan then
        refits the deployed configuration on its calibration rows)."""
        from ..deploy.predictor import FCPSPredictor
        from ..store import StoreError
        try:
            return FCPSPredictor.from_dict(store.run_predictor(run_id))
        except StoreError:
            return None
    return make_deployment(panel, blocks, sel["judges"], sel["family"], sel.get("params") or {},
                           selector=selector, note=note, selection_risk=risk, predictor=predictor)


def run_blocks(panel, params: dict, run_id: int, *, seed=None, split=None, test_share=None, counts=None):
    """A stored run's blocks: redrawn from the given split/counts/seed, else from what the
    run stored; refused when they cannot reproduce the stored block sizes."""
    from ..data.splits import make_blocks
    stored = params.get("blocks") or {}
    cli = params.get("cli") or {}
    seed = seed if seed is not None else stored.get("seed") or 0
    if counts is None and split is None and not test_share:
        if cli:
            split, test_share = cli.get("split"), cli.get("test_share") or 0.0
            if cli.get("n_select") is not None:
                counts = {"n_S": cli.get("n_select"), "n_M": cli.get("n_cal"), "n_V": cli.get("n_val"),
                          "n_T": cli.get("n_test") or 0}
        elif stored.get("source") == "counts":
            counts = {k: stored.get(k, 0) for k in ("n_S", "n_M", "n_V", "n_T")}
    blocks = make_blocks(panel, split=split, test_share=test_share, counts=counts, seed=seed)
    sizes = {k: stored[k] for k in ("n_S", "n_M", "n_V", "n_T") if k in stored}
    got = blocks.sizes()
    if sizes and any(got.get(k) != v for k, v in sizes.items()):
        show = lambda d: "/".join(str(d.get(k)) for k in ("n_S", "n_M", "n_V", "n_T"))  # noqa: E731
        raise FCPSError(f"run {run_id}'s blocks (S/M/V/T {show(sizes)}) cannot be redrawn from its stored "
                        f"settings (got {show(got)}); pass the --split or --n-* counts and --seed the run used")
    return blocks


def read_plan_traffic(ref: str, deployment, store=None):
    """Unlabelled traffic for the plan: a panel file read with the deployed judges' schemas,
    or a stored panel of that name in ``store``."""
    if not os.path.exists(ref):
        if store is not None and store.has_panel(ref):
            return store.load_panel(ref)
        raise FCPSError(f"--traffic {ref!r}: no such file (nor a stored panel of that name)")
    from .upload import read_panel_file
    schemas = {j.name: j.schema for j in deployment.panel.judges}
    return read_panel_file(ref, schema=schemas, require_labels=False)
