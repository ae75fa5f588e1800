"""The scalar families fitted along a judge path: every prefix of the path in one pass.

The prefixes of a path are nested, so a family fits all of them from one set of path-level
views (:meth:`ViewCache.path_view`: the distinct rows of M, V, T and the unlabelled traffic
over the whole path) with :meth:`Aggregator.fit_path` and scores them on V and T with
:meth:`Aggregator.predict_path`. The views of one path are built, used and dropped before
the next path, so memory holds one path's rows, not one copy per prefix. Each prefix's
record is what fitting it on its own gives (see the families' ``fit_path``), plus its
predictions on V and T, which the choice rules, the held-out matrix and the audit read
instead of predicting again.
"""

from __future__ import annotations


from ..families import REGISTRY
from ..families.base import one_blas_thread
from .views import prediction_record


@one_blas_thread
def fit_joint_families(selector, views, jobs: list[tuple[tuple, dict[str, list[int]]]],
                       keep: list | None = None) -> dict:
    """Models of the families that fit all paths together (``joint_paths``: ds_jury's EM
    chains advance in lockstep), keyed (prefix judges, family, params); ``jobs`` lists each
    path's judges and the sizes every family needs on it. ``keep`` (per job, None or per
    family the set of sizes whose models are read; None: all): only those models are made
    (a refit restricted by ``only``, :func:`.menu.fit_menu`), each the one made without
    ``keep``."""
    keep = [None] * len(jobs) if keep is None else keep
    out: dict[tuple, object] = {}
    for family in selector.families:
        cls = REGISTRY[family]
        if not cls.joint_paths:
            continue
        wanted = [(judges, sizes[family], None if kept is None else kept.get(family, set()))
                  for (judges, sizes), kept in zip(jobs, keep) if sizes.get(family)]
        if not wanted:
            continue
        inputs = []
        for judges, sizes, _ in wanted:
            path = judges[:max(sizes)]
            vM = views.path_view(path, "M", hold=True)     # the path's own fits read it next
            vR = views.path_view(path, "rest") if cls.uses_unlabelled else None
            inputs.append((vM.X, vM.y, None if vR is None else vR.X, sizes))
        for params in selector.family_grid(family):
            fitted = cls.fit_paths(inputs, **({} if all(k is None for _, _, k in wanted)
                                              else {"keep": [k for _, _, k in wanted]}),
                                   **selector.family_fixed(family), **params)
            key_params = tuple(sorted(params.items()))
            for (judges, sizes, _), models in zip(wanted, fitted):
                for K, model in zip(sizes, models):
                    if model is not None:
                        out[(judges[:K], family, key_params)] = model
    return out


@one_blas_thread
def fit_path_families(selector, views, judges: tuple, sizes_by_family: dict[str, list[int]],
                      fits: dict, *, score_val: bool, has_T: bool, prefitted: dict | None = None,
                      view_len: int | None = None, keep: dict | None = None) -> None:
    """Fit every (family, K) of ``sizes_by_family`` on the path ``judges`` (K ascending) and
    store each record in ``fits`` under (prefix judges, family, params), with its V (and T)
    predictions under ``record['pred']``; ``prefitted`` holds models already fitted
    (:func:`fit_joint_families`). ``view_len``: the prefix the path's views span (None: the
    longest size listed); a refit cut to some prefixes keeps the whole menu's views, whose
    distinct rows the fits read. ``keep`` (per family the sizes whose models are read; None:
    all): the joint families' (:func:`fit_joint_families`) other prefixes were not made,
    and are not recorded."""
    todo = {f: s for f, s in sizes_by_family.items() if s}
    if keep is not None:
        todo = {f: ([k for k in s if k in keep.get(f, ())] if REGISTRY[f].joint_paths else s)
                for f, s in todo.items()}
        todo = {f: s for f, s in todo.items() if s}
    kept = {f: None if keep is None or not REGISTRY[f].path_keeps_prefixes else keep.get(f, set()) for f in todo}
    if not todo:
        return
    prefitted = prefitted or {}
    K_max = max(max(s) for s in todo.values()) if view_len is None else view_len
    path = judges[:K_max]
    block_views = {b: views.path_view(path, b) for b in ("M", "V")}
    if has_T:
        block_views["T"] = views.path_view(path, "T")
    if any(REGISTRY[f].uses_unlabelled and not REGISTRY[f].joint_paths for f in todo):
        block_views["rest"] = views.path_view(path, "rest")
    vM, vV = block_views["M"], block_views["V"]
    # Short prefixes of a long path have far fewer distinct rows than the path: fit and score
    # those on their own (smaller) views; the results are the same, the cost is not.
    short = set(views.short_prefixes(path, vM.X.n_rows))
    for family, sizes in list(todo.items()):
        cls = REGISTRY[family]
        if cls.joint_paths:
            continue
        for K in (k for k in sizes if k in short and (kept[family] is None or k in kept[family])):
            _fit_prefix_alone(selector, views, judges[:K], family, fits, score_val=score_val, has_T=has_T,
                              path_views=block_views)
        todo[family] = [k for k in sizes if k not in short]
    for family, sizes in todo.items():
        if not sizes:
            continue
        cls = REGISTRY[family]
        unlabelled = block_views["rest"].X if "rest" in block_views and cls.uses_unlabelled else None
        for params in selector.family_grid(family):
            key_params = tuple(sorted(params.items()))
            models = [prefitted.get((judges[:K], family, key_params)) for K in sizes]
            made = sizes
            if any(m is None for m in models):
                models = cls.fit_path(vM.X, vM.y, unlabelled, sizes,
                                      **({} if kept[family] is None else {"keep": kept[family]}),
                                      **selector.family_fixed(family), **params)
                # with ``keep``: the kept prefixes' models only (each prediction reads its own model)
                made = [K for K, m in zip(sizes, models) if m is not None]
                models = [m for m in models if m is not None]
                if not made:
                    continue
            pV = cls.predict_path(models, made, vV.X) if vV.X.n_rows else None
            pT = cls.predict_path(models, made, block_views["T"].X) if has_T else None
            for i, (K, model) in enumerate(zip(made, models)):
                fits[(judges[:K], family, key_params)] = prediction_record(
                    model, vV, None if pV is None else pV[:, i].copy(), score_val,
                    block_views.get("T"), None if pT is None else pT[:, i].copy())


def _fit_prefix_alone(selector, views, judges: tuple, family: str, fits: dict, *, score_val: bool,
                      has_T: bool, path_views: dict | None = None) -> None:
    """One prefix of a scalar family fitted on its own distinct-row views (cached per
    prefix), with its V (and T) predictions. ``path_views``: the blocks' views of a path
    starting with ``judges``, whose distinct rows the prefix's views are grouped from
    (:meth:`.views.ViewCache.prefix_of_path`)."""
    cls = REGISTRY[family]

    def view(block):
        path_view = (path_views or {}).get(block)
        return (views.get(judges, block, "scalar") if path_view is None
                else views.prefix_of_path(path_view, judges, block))
    vM, vV = view("M"), view("V")
    unlabelled = view("rest").X if cls.uses_unlabelled else None
    for params in selector.family_grid(family):
        model = cls(**selector.family_fixed(family), **params).fit(vM.X, vM.y, unlabelled)
        vT = view("T") if has_T else None
        fits[(judges, family, tuple(sorted(params.items())))] = prediction_record(
            model, vV, model.predict(vV.X) if vV.X.n_rows else None, score_val,
            vT, None if vT is None else model.predict(vT.X))
