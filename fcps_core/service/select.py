"""The select workflow: a :class:`SelectRequest` (a panel already read, its blocks, the
selector's options, judge costs, and where to store the run) in; the
:class:`SelectOutcome` (the result, the stored run id, the deployable predictor) out.

The command line's ``select`` and the dashboard's Select page build a request and render the
outcome; the blocks (:func:`fcps_core.data.splits.make_blocks`), the fits
(:class:`fcps_core.selection.FCPSSelector`) and the store (``Store.save_selection``) are
reached only from here."""

from __future__ import annotations

import datetime as _dt
from dataclasses import dataclass, field, fields
from typing import Callable

from ..defaults import DEFAULT_PATHS
from ..families import FAMILIES  # noqa: F401 (the menu the front ends offer)
from ..measures.judge_paths import PATH_RULES  # noqa: F401

#: the path rule added to the default menu when judge costs are known (information per cost)
COST_PATH = "cost_aware"


def menu_paths(paths, costs: dict | None) -> tuple:
    """The path rules of a selection: ``paths`` as given, else the default menu, which with
    judge costs also orders judges by information per cost (:data:`COST_PATH`)."""
    if paths is not None:
        return tuple(paths)
    return tuple(DEFAULT_PATHS) + ((COST_PATH,) if costs else ())


def named_menu(name: str | None, **given) -> dict:
    """A named menu (``paper_table``, ``paper_scalar``: :data:`fcps_core.paper.experiments.NAMED_MENUS`)
    as the selector fields it fixes (families, paths, largest K); {} without a name. ``given``
    maps the flags it replaces (``"--families": value``...) to their values: any set one is
    refused, naming it."""
    if not name:
        return {}
    from ..errors import FCPSError
    from ..paper.experiments import NAMED_MENUS
    clash = [flag for flag, value in given.items() if value]
    if clash:
        raise FCPSError(f"--menu {name} fixes the families, paths and K; drop {', '.join(clash)} "
                        "or drop --menu")
    spec = NAMED_MENUS[name]
    return {"families": tuple(spec.families), "paths": tuple(spec.paths), "k_max": spec.k_max}


def named_menus() -> tuple[str, ...]:
    from ..paper.experiments import NAMED_MENUS
    return tuple(NAMED_MENUS)


def draw_blocks(panel, *, split: str | None = None, counts: dict | None = None,
                test_share: float | None = None, seed: int = 0, folds: int | None = None):
    """The S/M/V(/T) blocks of ``panel`` (:func:`fcps_core.data.splits.make_blocks`): the file's
    block column, else a grouped draw by ``split`` ratio, ``counts`` or ``test_share``.

    ``folds``: the cross-fitted protocol's folds when that protocol will run. A panel with
    fewer labelled groups than folds is then refused for that reason (one group per fold)
    before the draw, whose own refusal (one group per block S, M, V) would name blocks the
    cross-fitted protocol pools."""
    from ..data.splits import make_blocks
    if folds is not None and panel.n_labelled:
        from ..selection.folds import check_fold_groups
        check_fold_groups(len(set(panel.group_ids[panel.labelled].tolist())), folds)
    options = {} if test_share is None else {"test_share": test_share}
    return make_blocks(panel, split=split, counts=counts, seed=seed, **options)


def block_sizes(panel, blocks) -> list[dict]:
    """One row per block S, M, V, T: its labelled rows and its groups."""
    return [{"block": b, "labelled rows": len(getattr(blocks, b)),
             "groups": len(set(panel.group_ids[getattr(blocks, b)]))} for b in "SMVT"]


def read_judge_costs(path: str) -> dict:
    """A judge costs file (:func:`fcps_core.data.judge_costs.read_judge_costs`)."""
    from ..data.judge_costs import read_judge_costs as read
    return read(path)


def costs_for_judges(costs: dict | None, judge_names, *, subset: bool, source: str | None) -> dict | None:
    """``costs`` restricted to the judges in use when a subset of judges was asked for, then
    checked to cover exactly those judges (an error names ``source``)."""
    if costs and subset:
        costs = {j: v for j, v in costs.items() if j in set(judge_names)}
    if costs:
        from ..data.judge_costs import check_costs_cover
        check_costs_cover(costs, judge_names, source=source)
    return costs


@dataclass
class SelectRequest:
    """One selection to run: ``panel`` (a :class:`~fcps_core.data.panel.Panel` already read from a
    file, an upload or the store), how its blocks are drawn (``split`` ratio, ``counts`` or
    ``test_share``; the file's block column wins), ``options`` (fields of
    :class:`~fcps_core.selection.FCPSSelector`: families, paths, k_max, protocol, choice...;
    ``paths`` None is the default menu, see :func:`menu_paths`), ``judge_costs``, and the
    stored panel (``store``, ``panel_name``, ``panel_version``) the run is saved under when
    ``save`` (``params``: extra settings kept with the run)."""
    panel: object
    split: str | None = None
    counts: dict | None = None
    test_share: float | None = None
    seed: int = 0
    options: dict = field(default_factory=dict)
    judge_costs: dict | None = None
    progress: Callable[[float, str], None] | None = None
    save: bool = False
    store: object = None
    panel_name: str | None = None
    panel_version: str | None = None
    params: dict | None = None
    started_at: _dt.datetime | None = None
    want_predictor: bool = True


@dataclass
class SelectOutcome:
    """A finished selection: ``result`` (:class:`~fcps_core.selection.SelectionResult`), the
    ``blocks`` it ran on, the stored ``run_id`` (None when not stored) and the deployable
    ``predictor`` (:class:`~fcps_core.deploy.predictor.FCPSPredictor`; None when not asked for)."""
    result: object
    blocks: object
    run_id: int | None = None
    predictor: object = None


def selector_for(request: SelectRequest):
    """The :class:`~fcps_core.selection.FCPSSelector` a request runs."""
    from ..selection import FCPSSelector
    options = dict(request.options)
    options["paths"] = menu_paths(options.get("paths"), request.judge_costs)
    return FCPSSelector(**options, seed=request.seed, judge_costs=request.judge_costs, progress=request.progress)


def run_select(request: SelectRequest) -> SelectOutcome:
    """Draw the blocks, fit the menu and choose (one pass of the selector), then store the
    run with its predictor when ``request.save`` names a stored panel. A store refusal (the
    panel was replaced while the selection ran) is raised after the fits, as a
    :class:`~fcps_core.store.StoreError`."""
    selector = selector_for(request)
    blocks = draw_blocks(request.panel, split=request.split, counts=request.counts,
                         test_share=request.test_share, seed=request.seed,
                         folds=selector.folds if selector.protocol == "crossfit" else None)
    result = selector.fit(request.panel, blocks)
    predictor = result.predictor() if request.want_predictor or request.save else None
    outcome = SelectOutcome(result=result, blocks=blocks, predictor=predictor)
    if request.save and request.panel_name is not None:
        outcome.run_id = save_selection(request, result, predictor)
    return outcome


def save_selection(request: SelectRequest, result, predictor) -> int:
    """Store a finished selection as a run on ``request.panel_name`` (:func:`store_selection`)."""
    return store_selection(request.store, result, panel_name=request.panel_name, predictor=predictor,
                           panel_version=request.panel_version, params=request.params,
                           started_at=request.started_at)


def store_selection(store, result, *, panel_name: str, predictor=None, panel_version: str | None = None,
                    params: dict | None = None, started_at: _dt.datetime | None = None) -> int:
    """Store a finished selection as a run on the stored panel ``panel_name`` with its
    ``predictor`` (an FCPSPredictor or its dict); the run's settings are the selector's, with
    ``params`` beside them when given. Refused (a StoreError) when the panel changed from
    ``panel_version`` since it was read."""
    params = None if params is None else {**selection_params_of(result), **params}
    doc = predictor.to_dict() if hasattr(predictor, "to_dict") else predictor
    return store.save_selection(result, panel=panel_name, params=params, started_at=started_at, predictor=doc,
                                panel_version=panel_version)


def selection_params_of(result) -> dict:
    from ..store import selection_params
    return selection_params(result)


def refit_stored(run: dict, panel, progress=None, overrides: dict | None = None):
    """A stored selection run refitted from its stored settings (selector fields, blocks and
    seed), for what needs the live result (the next-judge plan, drop-one changes): a stored
    run keeps its tables, not its fitted models. Returns (result, same) where ``same`` says
    whether the refit deploys what the stored run deploys (family, K, judges). ``overrides``
    replaces selector settings (e.g. ``max_judges`` to deploy another frontier point)."""
    from ..selection import FCPSSelector
    from ..data.splits import make_blocks
    params = dict(run.get("params") or {})
    b = params.pop("blocks", None) or {}
    sizes = [int(b.get(k) or 0) for k in ("n_S", "n_M", "n_V", "n_T")]
    seed = int(b.get("seed") or 0)
    if b.get("source") == "column":
        blocks = make_blocks(panel)
    elif b.get("source") == "counts":
        blocks = make_blocks(panel, counts=dict(zip(("n_S", "n_M", "n_V", "n_T"), sizes)), seed=seed)
    else:       # a ratio draw: the stored sizes are that ratio
        blocks = make_blocks(panel, split=":".join(map(str, sizes if sizes[3] else sizes[:3])), seed=seed)
    known = {f.name for f in fields(FCPSSelector)}
    settings = {k: v for k, v in params.items() if k in known and k != "progress"} | (overrides or {})
    selector = FCPSSelector(**settings, progress=progress)
    result = selector.fit(panel, blocks)
    stored, fresh = run["result"]["selected"], result.selected_dict()
    same = all(stored.get(k) == fresh.get(k) for k in ("family", "K", "judges"))
    return result, same


def deployable_label_scale(*args, **kwargs):
    """The label scale a deployment reports on (:func:`fcps_core.selection.deployable_label_scale`)."""
    from ..selection import deployable_label_scale as scale
    return scale(*args, **kwargs)
