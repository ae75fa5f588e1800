"""Issue 24: every frontier point's deployed-risk estimate carries the learning-curve
correction the default's carries (r(n) = a + b/n through the half-size and training-size
held-out risks of the point's own members).

The formula is checked on hand-computed numbers (four held-out rows, three members, two
folds); the selection is checked against an independent recomputation of the
training-size risk from the held-out prediction matrix and the formula written out."""

from __future__ import annotations

import numpy as np
import pytest

from fcps_core import make_blocks, select
from fcps_core.files.json_values import json_ready
from fcps_core.paper.synthetic import make_regime
from fcps_core.selection.crossfit import CorrectionRefits

MENU = dict(families=["mean_iso", "logistic", "ridge_iso"], n_boot=40, n_jobs=1)


class _Rows:
    def __init__(self, rep, inverse):
        self.rep, self.inverse, self.counts = [rep], [inverse], None


class _Distinct:
    def __init__(self, n):
        self.rep, self.counts, self.inverse = np.arange(n), np.ones(n), None


class _HeldOut:
    """The first repeat's held-out predictions of three candidates on four rows."""

    def __init__(self, full):
        self.full = np.asarray(full, dtype=float)          # (rows, candidates)
        self.vcol = np.arange(self.full.shape[1])

    def stored(self, cols):
        return self.full[None, :, cols]


class _Cand:
    def __init__(self, index):
        self.index = index


class _Selector:
    objective = "mse"


class _Panel:
    def __init__(self, labels):
        self.labels = np.asarray(labels, dtype=float)


def _halves(*held_rows):
    """Folds of the first repeat as :func:`crossfit._halves` gives them (half, held-out rows,
    their table rows, positions, n_half, n_train); only the table rows and the sizes (10 and
    20) are read here."""
    return [(None, None, np.array(rows), None, 10, 20) for rows in held_rows]


def _refits():
    """Labels 1, 0, 1, 0. Half-size predictions (fold 1 holds rows 0-1, fold 2 rows 2-3):
    A .6 .4 .7 .2, B .8 .2 .5 .4, C .9 .1 .8 .2; training-size: A .9 .1 .8 .2,
    B .7 .3 .8 0, C .5 .5 .5 .5. n_half 10, n_train 20, n_D 30."""
    half = {"A": [.6, .4, .7, .2], "B": [.8, .2, .5, .4], "C": [.9, .1, .8, .2]}
    results = [{k: np.array(v[:2]) for k, v in half.items()}, {k: np.array(v[2:]) for k, v in half.items()}]
    full = np.array([[.9, .7, .5], [.1, .3, .5], [.8, .8, .5], [.2, 0., .5]])
    ref = CorrectionRefits(members=[_Cand(0), _Cand(1)], keys=["A", "B", "C"],
                           table_rows=_Rows(np.arange(4), np.arange(30) % 4), halves=_halves([0, 1], [2, 3]),
                           results=iter(results), indices=[0, 1, 2])
    labels = np.zeros(30)
    labels[[0, 2]] = 1.0
    return ref, _Panel(labels), _HeldOut(full)


def _refit_predicts_as_whole_menu(sel, panel, menu_rows, full, held, wanted):
    """The menu refitted with ``only=wanted``; asserts its held-out predictions of every
    wanted key equal the whole menu's (``full``) bit for bit."""
    from fcps_core.selection.crossfit import _predict_candidates
    from fcps_core.selection.menu import fit_menu
    some = fit_menu(sel, panel, menu_rows, expand_grid=True, score_val=False, only=wanted)
    got = _predict_candidates(some, held, keys=wanted)
    expected = _predict_candidates(full, held, keys=wanted)
    assert got.keys() == expected.keys() == wanted
    for k in wanted:
        assert np.array_equal(got[k], expected[k]), k
    return some


def _fit_rows(panel, n_fit: int, seed: int):
    """(fit rows, held-out rows, the MenuRows fitting on the first) of a seeded permutation."""
    from fcps_core.selection.menu import MenuRows
    rows = np.random.default_rng(seed).permutation(panel.n_rows)
    fit, held = np.sort(rows[:n_fit]), np.sort(rows[n_fit:])
    empty = np.zeros(0, dtype=np.int64)
    return fit, held, MenuRows(path_rows=fit, fit=fit, scored=empty, audit=empty, unlabelled=empty)


def test_correction_per_member_set_by_hand():
    """delta = max(b, 0) (1/n_train - 1/n_D), b = (r_half - r_train) / (1/n_half - 1/n_train),
    b at most r_train n_train (the curve's floor a = r_train - b/n_train is never negative;
    n_half 10, n_train 20, n_D 30). A+B: half average .7 .3 .6 .3, losses .09 .09 .16 .09,
    r_half .1075; training average .8 .2 .8 .1, losses .04 .04 .04 .01, r_train .0325;
    b = .075 / .05 = 1.5, above r_train n_train = .65 (a would be -.0425): delta = .65/60.
    A alone: r_half (.16+.16+.09+.04)/4 = .1125, r_train (.01+.01+.04+.04)/4 = .025;
    b = 1.75 capped at .5, delta = .5/60. C alone: r_half .025 < r_train .25, so b < 0 and
    delta = 0."""
    ref, panel, heldout = _refits()
    D = np.arange(30)
    default = ref.finish(_Selector(), panel, D, heldout, _Distinct(4))
    assert default["risk_half"] == pytest.approx(0.1075, rel=1e-12)
    assert default["risk_train"] == pytest.approx(0.0325, rel=1e-12)
    assert default["delta"] == pytest.approx(0.65 / 60, rel=1e-12) and default["model"] == "b/n (a >= 0)"
    assert ref.correction([0, 1])["delta"] == pytest.approx(0.65 / 60, rel=1e-12)
    assert ref.correction([0])["delta"] == pytest.approx(0.5 / 60, rel=1e-12)
    one = ref.correction([2])
    assert one["risk_half"] == pytest.approx(0.025, rel=1e-12) and one["risk_train"] == pytest.approx(0.25)
    assert one["delta"] == 0.0


def test_a_failed_refit_gives_no_correction():
    ref, panel, heldout = _refits()
    # a configuration that cannot be fitted at half size: every key it holds says why
    # (half_fold_configurations)
    ref.results = iter([dict.fromkeys("ABC", "not computed: too few rows"), {}])
    ref.finish(_Selector(), panel, np.arange(30), heldout, _Distinct(4))
    assert ref.correction([0]) == {"delta": 0.0, "note": "not computed: too few rows"}


def test_a_member_not_offered_at_half_size_leaves_the_others_corrected():
    """C's configuration did not offer it at half size in fold 2: C's points get no
    correction (delta 0 and the reason), A+B's is the hand value above."""
    ref, panel, heldout = _refits()
    results = list(ref.results)
    results[1]["C"] = "the deployed configuration is not offered at half size"
    ref.results = iter(results)
    ref.finish(_Selector(), panel, np.arange(30), heldout, _Distinct(4))
    assert ref.correction([0, 1])["delta"] == pytest.approx(0.65 / 60, rel=1e-12)
    assert ref.correction([2]) == {"delta": 0.0, "note": "the deployed configuration is not offered at half size"}


def test_point_refits_read_the_default_refits_for_shared_members():
    """The points' own refits hold C only; A (the default's member) is read from the
    default's refits: the A+C average's correction by hand. Half average of A and C:
    .75 .25 .75 .2, losses .0625 .0625 .0625 .04, r_half .056875; training-size average
    .7 .3 .65 .35, losses .09 .09 .1225 .1225, r_train .10625: b < 0, delta 0. A alone as
    above (.5/60: b capped at r_train n_train)."""
    base, panel, heldout = _refits()
    base.finish(_Selector(), panel, np.arange(30), heldout, _Distinct(4))
    half_c = [.9, .1, .8, .2]
    own = CorrectionRefits(members=[], keys=["C"], table_rows=base.table_rows, halves=base.halves,
                           results=iter([{"C": np.array(half_c[:2])}, {"C": np.array(half_c[2:])}]), indices=[2])
    own.base = base
    read = own.reader(_Selector(), panel, np.arange(30), heldout, _Distinct(4))
    both = read([0, 2])
    assert both["risk_half"] == pytest.approx(0.056875, rel=1e-12)
    assert both["risk_train"] == pytest.approx(0.10625, rel=1e-12)
    assert both["delta"] == 0.0
    assert read([0])["delta"] == pytest.approx(0.5 / 60, rel=1e-12)


@pytest.fixture(scope="module")
def result():
    panel = make_regime("additive", rows=400, judges=5, seed=4, group_size=2, tie_rate=0.1)
    return select(panel, make_blocks(panel, seed=1), seed=1, **MENU)


def test_every_point_is_corrected_with_its_own_members(result):
    """Each replayed point: estimate = bbc_estimate - delta, the interval shifted by the same
    amount; its training-size risk is its own members' (recomputed here from the held-out
    matrix: first repeat, members averaged, plain mean over D), and delta follows the
    formula written out from the half-size and training-size risks."""
    d = json_ready(result.to_dict())
    h = result.heldout
    P = np.asarray(h.preds)
    checked, deltas = 0, set()
    for p in d["frontier"]:
        dr = p["deployed_risk"]
        corr = dr["training_size_correction"]
        if p["chosen"]:
            assert dr["estimate"] == pytest.approx(result.deployed_risk["estimate"], rel=1e-12)
            assert corr == result.deployed_risk["training_size_correction"]
            continue
        delta = corr["delta"]
        assert dr["estimate"] == pytest.approx(dr["bbc_estimate"] - delta, rel=1e-12)
        idx = [m["index"] for m in p["members"]]
        r_train = float(np.mean((h.y - P[0][:, idx].mean(axis=1)) ** 2))
        assert corr["risk_train"] == pytest.approx(r_train, rel=1e-9)
        nh, nt, nd = corr["n_half"], corr["n_train"], corr["n_deployable"]
        assert nd == len(h.y) and nh < nt < nd
        b = (corr["risk_half"] - r_train) / (1 / nh - 1 / nt)
        assert delta == pytest.approx(min(max(b, 0.0), r_train * nt) * (1 / nt - 1 / nd), rel=1e-9, abs=1e-15)
        deltas.add(round(delta, 12))
        checked += 1
    assert checked == len(result.panel.judge_names) - 1
    assert len(deltas) > 1          # the points' members differ, and so do their corrections


def test_a_refit_of_some_keys_predicts_them_as_the_full_menu_does():
    """``fit_menu(only=keys)`` (the half-size refits) fits the prefix-at-a-time families
    only at the wanted prefixes and parameters and skips diagnostics: every wanted key's
    held-out predictions equal the full menu's bit for bit (residual on two bases, one
    backoff shrinkage, a table prefix, path families), and no unwanted prefix-at-a-time
    candidate is fitted."""
    from fcps_core.selection import FCPSSelector
    from fcps_core.selection.crossfit import candidate_key
    from fcps_core.selection.menu import fit_menu
    panel = make_regime("mixed", rows=600, judges=6, seed=2, group_size=2, tie_rate=0.1)
    sel = FCPSSelector(families=("table", "backoff", "residual", "mean_iso", "logistic"), seed=0)
    fit, held, menu_rows = _fit_rows(panel, 400, seed=0)
    full = fit_menu(sel, panel, menu_rows, expand_grid=True, score_val=False)
    keys = [candidate_key(c) for c in full.candidates]
    table_like = [k for k in keys if k[2] in ("table", "backoff", "residual")]
    wanted = frozenset([k for k in table_like if k[2] == "residual" and k[1] == 2][:2]
                       + [k for k in table_like if k[2] == "backoff" and k[1] == 3][:1]
                       + [k for k in table_like if k[2] == "table"][:1]
                       + [k for k in keys if k[2] == "logistic"][-1:] + [k for k in keys if k[2] == "mean_iso"][:1])
    assert len(wanted) == 6 and len({k[3] for k in wanted if k[2] == "residual"}) == 2
    some = _refit_predicts_as_whole_menu(sel, panel, menu_rows, full, held, wanted)
    fitted = {candidate_key(c) for c in some.candidates if c.family in ("table", "backoff", "residual")}
    assert fitted == {k for k in wanted if k[2] in ("table", "backoff", "residual")}
    assert all(c.diagnostics is None for c in some.candidates)


def test_a_refit_of_some_keys_cuts_path_fits_after_the_last_wanted_prefix(monkeypatch):
    """``fit_menu(only=keys)`` fits a family whose path fit keeps prefixes apart (logistic's
    warm-started path, one-coin) only up to the last prefix a wanted key (or a wanted
    residual's base) reads, and skips paths with nothing wanted, while ridge's path (one
    Cholesky factor for every prefix) is fitted whole where it is fitted: every wanted key's
    held-out predictions still equal the whole menu's bit for bit."""
    from fcps_core.families import REGISTRY
    from fcps_core.selection import FCPSSelector
    from fcps_core.selection.crossfit import candidate_key
    from fcps_core.selection.menu import fit_menu
    panel = make_regime("mixed", rows=900, judges=8, seed=5, group_size=2, tie_rate=0.05)
    sel = FCPSSelector(families=("residual", "mean_iso", "one_coin_iso", "ridge_iso", "logistic"), seed=0)
    fit, held, menu_rows = _fit_rows(panel, 600, seed=1)
    calls: dict = {}
    for family in ("logistic", "ridge_iso", "one_coin_iso"):
        cls = REGISTRY[family]
        original = cls.fit_path.__func__

        def record(c, X, y, unlabelled, sizes, _family=family, _original=original, **params):
            calls.setdefault(_family, []).append(max(sizes))
            return _original(c, X, y, unlabelled, sizes, **params)
        monkeypatch.setattr(cls, "fit_path", classmethod(record))
    full = fit_menu(sel, panel, menu_rows, expand_grid=True, score_val=False)
    full_calls, calls = calls, {}
    keys = [candidate_key(c) for c in full.candidates]
    rules = list(dict.fromkeys(k[0] for k in keys))
    first, second = rules[0], rules[1]
    wanted = frozenset([k for k in keys if k[0] == first and k[2] == "logistic" and k[1] == 6]
                       + [k for k in keys if k[0] == first and k[2] == "one_coin_iso" and k[1] == 5]
                       + [k for k in keys if k[0] == first and k[2] == "ridge_iso" and k[1] == 5]
                       + [k for k in keys if k[0] == second and k[2] == "residual" and k[1] == 2
                          and dict(k[3])["base"] == "logistic"][:1])
    assert len(wanted) == 4
    some = _refit_predicts_as_whole_menu(sel, panel, menu_rows, full, held, wanted)
    # the whole menu fits every path to its last judge; the refit cuts logistic and one-coin
    assert max(full_calls["logistic"]) == max(full_calls["one_coin_iso"]) == 8
    assert max(calls["logistic"]) == 6 and max(calls["one_coin_iso"]) == 5
    assert len(calls["ridge_iso"]) < len(full_calls["ridge_iso"]) and set(calls["ridge_iso"]) == {8}


def test_point_refits_grouped_into_fewer_tasks_give_every_fold_its_own_result(monkeypatch):
    """``_refits(tasks_at_most=k)`` runs consecutive folds in one task (the points' refits:
    one task per worker); each fold's result is the one it gets as its own task, in fold order, and
    closing them stops the pool's generator."""
    from fcps_core.selection import crossfit as C
    calls = []

    def fake_fold(configs, panel, D, half, va, unlabelled, pick):
        calls.append(int(half[0]))
        return {"k": np.array([float(half[0]), float(va[0])])}
    monkeypatch.setattr(C, "half_fold_configurations", fake_fold)
    monkeypatch.setattr(C, "candidate_key", lambda c: "k")
    halves = [(np.array([10 * f]), np.array([10 * f + 1]), np.arange(1), np.arange(1), 1, 2) for f in range(5)]
    cand = _Cand(0)
    opened = []
    orig_run = C.run_tasks

    def run(jobs, func, tasks, **kw):
        # the grouped tasks, run here: what the pool would return for each, in order
        opened.append((len(tasks), kw.get("background")))
        return (func(*t) for t in tasks) if not kw.get("background") else iter([func(*t) for t in tasks])
    monkeypatch.setattr(C, "run_tasks", run)
    grouped = C._refits([], [], [cand], None, None, None, halves, None, 2, tasks_at_most=2)
    alone = C._refits([], [], [cand], None, None, None, halves, None, 2)
    assert opened == [(2, True), (5, None)]
    got, want = list(grouped.results), list(alone.results)
    assert len(got) == 5 and all(np.array_equal(g["k"], w["k"]) for g, w in zip(got, want))
    assert [g["k"][0] for g in got] == [0.0, 10.0, 20.0, 30.0, 40.0]
    # one task per worker: with one job there is no grouping (every fold runs here)
    monkeypatch.setattr(C, "run_tasks", orig_run)
    serial = C._refits([], [], [cand], None, None, None, halves, None, 1, tasks_at_most=1)
    assert [r["k"][0] for r in serial.results] == [0.0, 10.0, 20.0, 30.0, 40.0]

    class Pending:
        closed = False

        def __iter__(self):
            return iter(())

        def close(self):
            Pending.closed = True
    C._FoldResults(Pending()).close()
    assert Pending.closed


def test_point_refits_take_one_task_per_worker(monkeypatch):
    """The points' refits spread over every worker process (one task each, the folds split
    between them), not over all workers but one: on a panel of many judges they outlast the
    bootstrap and the replays this process computes meanwhile, which then waited for them
    (docs/performance.md, "the points' refits on every worker")."""
    from fcps_core.selection import crossfit as C
    seen = {}

    def fake_refits(configs, members, others, panel, D, unlabelled, halves, table_rows, jobs, tasks_at_most=None):
        seen["tasks_at_most"] = tasks_at_most
        return C.CorrectionRefits(members=[], keys=[], table_rows=None, halves=[], results=iter(()), indices=[])
    monkeypatch.setattr(C, "_refits", fake_refits)
    monkeypatch.setattr(C, "_rule_configurations", lambda selector, rest: [])
    monkeypatch.setattr(C, "pool_workers", lambda jobs: 3)
    base = C.CorrectionRefits(members=[], keys=[], table_rows=None, halves=[], results=iter(()), indices=[])
    base.rest = [_Cand(0)]
    C.start_point_refits(None, None, None, base, None, jobs=-1)
    assert seen["tasks_at_most"] == 3
