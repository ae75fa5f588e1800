"""The screen after the first repeat (:mod:`fcps_core.selection.screening`).

Checked: the rule on a hand-computed toy (means, clustered SEs, the best candidate with no
more judges and no higher cost, the largest SE ahead); the held-out tables reading a
screened column's first repeat in every repeat; and on synthetic panels where the screen
drops candidates, that (a) every kept candidate's figures and the whole answer (choice,
members, ties, frontier, deployed-risk estimate) equal a run without the screen, (b) every
screened candidate's risk equals its risk in a one-repeat run (the first repeat's folds are
the same), and (c) worker processes give the sequential run's result.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from fcps_core import make_blocks
from fcps_core.errors import MenuError
from fcps_core.paper.synthetic import make_regime
from fcps_core.selection import FCPSSelector
from fcps_core.selection.choice import row_losses
from fcps_core.selection.folds import HeldOut, RepeatTables
from fcps_core.selection.screening import (best_count_references, best_subset_references, best_without_each_judge,
                                           first_repeat_risks, same_set_references, screen_candidates)

MENU = dict(families=["table", "logistic", "mean_iso", "ridge_iso", "one_coin_iso", "ds_jury"], k_max=5)


# -- the rule on a toy, by hand ---------------------------------------------------------------
# Four rows in two groups of two, labels 0, MSE: a candidate's loss is its prediction squared.
#   A (judge 0)     p = .1 .1 .1 .1   losses .01 each          r = .01  sums .02 .02     u = 0
#   B (judges 0, 1) p = .5 .5 .3 .3   losses .25 .25 .09 .09   r = .17  sums .50 .18, residuals
#                   +.16 -.16, u = sqrt(2 * (.16^2 + .16^2)) / 4 = .08
#   C (judges 0, 1) p = .2 .2 .2 .2   losses .04 each          r = .04                    u = 0
#   D (judge 1)     p = .3 .3 .1 .1   losses .09 .09 .01 .01   r = .05  sums .18 .02, residuals
#                   +.08 -.08, u = sqrt(2 * (.08^2 + .08^2)) / 4 = .04
TOY_PRED = np.array([[.1, .1, .1, .1], [.5, .5, .3, .3], [.2, .2, .2, .2], [.3, .3, .1, .1]])
TOY_MEANS = np.array([.01, .17, .04, .05])
TOY_SE = np.array([0.0, .08, 0.0, .04])
TOY_SETS = [(0,), (0, 1), (0, 1), (1,)]


def toy_screen(z, families=("ridge_iso",) * 4, **options):
    keys = [(name, len(s), f, ()) for name, s, f in zip("ABCD", TOY_SETS, families)]
    screen = screen_candidates(TOY_MEANS, TOY_SE, keys, TOY_SETS, 2, z=z, **options)
    return {k[0] for k in screen.screened}


def test_first_repeat_risks_are_the_clustered_means_and_ses():
    heldout = HeldOut(rows=np.arange(4), values=TOY_PRED.T[None, :, :], inverse=None, vcol=np.arange(4),
                      baselines={}, y=np.zeros(4), groups=np.array([0, 0, 1, 1]))
    means, se = first_repeat_risks(heldout, "mse")
    assert np.allclose(means, TOY_MEANS, rtol=0, atol=1e-15)
    assert np.allclose(se, TOY_SE, rtol=0, atol=1e-15)


def test_toy_references():
    # B and C call judges {0, 1}: the best candidate with no more judges is A (r .01, u 0);
    # no candidate is better than A, so U = u(A) = 0. B: gap .16 against z * .08; C: gap
    # .03 against 0. D calls {1}: A (one judge) is ahead by .04 against z * .04, but D is
    # the best candidate without judge 0 (the drop-one replay of judge 0), so it is kept.
    assert toy_screen(2.05) == {"C"}                 # B: .16 < .164
    assert toy_screen(1.9) == {"B", "C"}              # .16 > .152
    assert toy_screen(0.5) == {"B", "C"}              # D still kept
    # with judge costs the limit reference is the best subset: the same here
    assert toy_screen(1.9, with_costs=True) == {"B", "C"}
    # D outside the user's limits (say a budget): no drop-one replay reads it
    assert toy_screen(0.5, admissible=np.array([True, True, True, False])) == {"B", "C", "D"}


def test_toy_references_must_be_steady_and_the_guard_family_is_kept():
    # A not offered by every fold whatever its rows: B's and C's best subset is C (r .04,
    # u 0), itself for C; B: gap .13 against 2.05 * (.08 + 0) = .164 -> kept
    assert toy_screen(2.05, steady=np.array([False, True, True, True])) == set()
    assert toy_screen(2.05, guard_family="ridge_iso") == set()


def test_toy_full_limit_compares_info_first_candidates_on_their_own_judge_set():
    # every candidate on the info_first path: a binding limit compares B and C only with each
    # other (the full-limit filter keeps one judge set). C is the best on {0, 1}: kept;
    # B is behind C by .13, against z * (.08 + 0): kept at 1.9 (.152), screened at 0.5
    on_path = np.ones(4, dtype=bool)
    assert toy_screen(1.9, full_limit=on_path) == set()
    assert toy_screen(0.5, full_limit=on_path) == {"B"}
    # B and C off the path: no limit admits them alone, the other references decide
    assert toy_screen(1.9, full_limit=np.array([True, False, False, True])) == {"B", "C"}
    assert same_set_references(TOY_MEANS, TOY_SETS, on_path, np.ones(4, dtype=bool)).tolist() == [0, 2, 2, 3]
    # the reference must be steady: C is not, so B is the reference on {0, 1}, C's too
    steady = np.array([True, True, False, True])
    assert same_set_references(TOY_MEANS, TOY_SETS, on_path, steady).tolist() == [0, 1, 1, 3]
    assert same_set_references(TOY_MEANS, TOY_SETS, on_path, np.array([True, False, False, True])).tolist() == \
        [0, -1, -1, 3]


def test_toy_regime_sides():
    # C table-like (the only one): the best of its side is itself, so it is kept
    assert toy_screen(2.05, families=("ridge_iso", "ridge_iso", "table", "ridge_iso")) == set()
    # B table-like, alone on its side: kept; C scalar: behind A as before
    assert toy_screen(1.9, families=("ridge_iso", "table", "ridge_iso", "ridge_iso")) == {"C"}


def test_best_count_references_and_best_without_each_judge():
    counts = np.array([1, 2, 2, 1])
    assert best_count_references(TOY_MEANS, counts, np.ones(4, dtype=bool)).tolist() == [0, 0, 0, 0]
    assert best_count_references(TOY_MEANS, counts, np.array([False, True, True, True])).tolist() == [3, 2, 2, 3]
    calls = np.array([[True, False], [True, True], [True, True], [False, True]])
    assert best_without_each_judge(TOY_MEANS, calls, np.ones(4, dtype=bool)).tolist() == [3, 0]
    assert best_without_each_judge(TOY_MEANS, calls, np.array([True, True, True, False])).tolist() == [-1, 0]


def test_best_subset_references():
    calls = np.array([[True, False], [True, True], [True, True], [False, True]])
    assert best_subset_references(TOY_MEANS, calls, np.ones(4, dtype=bool)).tolist() == [0, 0, 0, 3]
    assert best_subset_references(TOY_MEANS, calls, np.array([False, True, True, True])).tolist() == [-1, 2, 2, 3]
    # equal means: the lower index; judges beyond 64
    wide = np.zeros((3, 71), dtype=bool)
    wide[0, 70] = wide[1, [3, 70]] = wide[2, 3] = True
    assert best_subset_references(np.array([.2, .1, .1]), wide, np.ones(3, dtype=bool)).tolist() == [0, 1, 2]


def test_screened_column_reads_its_first_repeat_in_every_repeat():
    values = np.arange(2 * 3 * 4, dtype=float).reshape(2, 3, 4)        # (repeats, columns, table rows)
    index = np.array([[0, 1, 2], [3, 3, 0]])                           # (repeats, distinct rows)
    plain = RepeatTables(values, index).gather([0, 1, 2])
    single = RepeatTables(values, index, np.array([False, True, False])).gather([0, 1, 2])
    assert np.array_equal(single[:, :, [0, 2]], plain[:, :, [0, 2]])
    assert np.array_equal(single[1, :, 1], plain[0, :, 1]) and np.array_equal(single[0, :, 1], plain[0, :, 1])
    assert not np.array_equal(plain[1, :, 1], plain[0, :, 1])


@pytest.mark.parametrize("objective", ["mse", "nll"])
def test_row_losses_of_first_repeat_columns_skip_the_copies_bit_for_bit(objective):
    rng = np.random.default_rng(3)
    preds = rng.uniform(0.01, 0.99, size=(2, 50, 6))
    single = np.array([False, True, True, False, True, False])
    preds[1][:, single] = preds[0][:, single]           # what RepeatTables.gather gives them
    y = rng.integers(0, 2, size=50).astype(float)
    plain = row_losses(objective, y, preds)
    assert np.array_equal(row_losses(objective, y, preds, single), plain)
    assert np.array_equal(row_losses(objective, y, preds, np.zeros(6, dtype=bool)), plain)


@pytest.mark.parametrize("bad", [0.5, float("nan"), "2", -1])
def test_screen_se_is_checked(bad):
    with pytest.raises(MenuError, match="screen_se"):
        FCPSSelector(screen_se=bad).validate(3)


# -- on selections ----------------------------------------------------------------------------
def _by_key(result) -> dict:
    return {(c.path_label or c.path_rule, c.K, c.family, tuple(sorted(c.params.items()))): c
            for c in result.candidates}


def _close(a, b, rel=1e-12) -> bool:
    if a is None or b is None:
        return a is b
    return math.isclose(a, b, rel_tol=rel, abs_tol=1e-15)


@pytest.fixture(scope="module", params=[("additive", 4, False), ("and", 1, True)])
def screened_runs(request):
    """Two panels where the screen drops candidates; the second's cfps paths offer subsets
    whose sizes vary by fold, and there screened cfps keys that a later fold would not
    offer are left out, as without the screen (checked below)."""
    regime, panel_seed, cfps = request.param
    panel = make_regime(regime, rows=1200, judges=6, seed=panel_seed, group_size=3, tie_rate=0.1)
    blocks = make_blocks(panel, seed=0)
    options = dict(seed=1, n_boot=100, **MENU, **({"paths": ("info_first", "cfps", "random")} if cfps else {}))
    screened = FCPSSelector(n_jobs=1, **options).fit(panel, blocks)
    full = FCPSSelector(n_jobs=1, screen_se=None, **options).fit(panel, blocks)
    one = FCPSSelector(n_jobs=1, screen_se=None, repeats=1, **options).fit(panel, blocks)
    return panel, blocks, options, screened, full, one


def test_the_screen_drops_candidates_here(screened_runs):
    *_, options, screened, full, one = screened_runs
    info = screened.protocol_info["screen"]
    assert info["n_screened"] > 10 and info["n_kept"] > 10
    shown = sum(c.repeats == 1 for c in screened.candidates)
    if "paths" in options:      # some screened cfps keys were left out: fewer than the screen's count
        assert 0 < shown < info["n_screened"]
    else:
        assert shown == info["n_screened"]
    assert "screen" not in full.protocol_info and all(c.repeats == 2 for c in full.candidates)


def test_kept_candidates_and_the_answer_equal_a_run_without_the_screen(screened_runs):
    *_, screened, full, _ = screened_runs
    new, ref = _by_key(screened), _by_key(full)
    assert new.keys() == ref.keys()
    for key, c in new.items():
        if c.repeats == 1:
            continue
        r = ref[key]
        for field in ("val_mse", "val_nll", "val_risk", "val_se", "stability"):
            assert _close(getattr(c, field), getattr(r, field)), (key, field)
        assert c.diagnostics == r.diagnostics, key
    assert screened.selected_index == full.selected_index and screened.members == full.members
    a, b = screened.to_dict(), full.to_dict()
    for part in ("tie", "frontier", "selected"):
        assert a[part] == b[part], part
    assert _close(a["deployed_risk"]["estimate"], b["deployed_risk"]["estimate"])


def test_screened_candidates_keep_their_one_repeat_risk(screened_runs):
    *_, screened, _, one = screened_runs
    ref = _by_key(one)
    screened_keys = [k for k, c in _by_key(screened).items() if c.repeats == 1]
    assert screened_keys
    for key in screened_keys:
        c, r = _by_key(screened)[key], ref[key]
        for field in ("val_mse", "val_nll", "val_risk", "val_se", "stability"):
            assert _close(getattr(c, field), getattr(r, field), rel=1e-9), (key, field)
        assert (c.diagnostics is None) == (r.diagnostics is None)
        if c.diagnostics is not None:
            assert _close(c.diagnostics.H_K, r.diagnostics.H_K, rel=1e-9)


def test_worker_processes_give_the_sequential_result(screened_runs):
    """The first repeat's folds in two workers while this process refits, then the screen,
    then the later repeats' folds in the same workers: the sequential run's result."""
    panel, blocks, options, screened, *_ = screened_runs
    parallel = FCPSSelector(n_jobs=2, **options).fit(panel, blocks)
    a, b = screened.to_dict(), parallel.to_dict()
    a.pop("timings", None), b.pop("timings", None)
    assert a == b


# -- the CLI flag -----------------------------------------------------------------------------
@pytest.mark.parametrize("flag,message", [("abc", "must be a number >= 1"), ("0.5", "must be a number >= 1")])
def test_cli_rejects_a_bad_screen_in_one_line(flag, message, capsys):
    from fcps_core.cli.main import main
    assert main(["select", "data/hanna.csv", "--screen-se", flag, "--quiet"]) == 2
    err = capsys.readouterr().err.strip()
    assert message in err and "--screen-se" in err and len(err.splitlines()) == 1


def test_cli_screen_off_refits_every_candidate(tmp_path, capsys):
    import json
    from fcps_core.cli.main import main
    panel = make_regime("additive", rows=400, judges=4, seed=2, group_size=2)
    path = tmp_path / "p.csv"
    from fcps_core.cli.engine_commands import write_panel_file
    write_panel_file(panel, str(path), "csv")
    args = ["select", str(path), "--families", "table", "mean_iso", "ridge_iso", "--n-boot", "50", "--json", "--quiet"]
    assert main(args + ["--screen-se", "off"]) == 0
    off = json.loads(capsys.readouterr().out)
    assert main(args) == 0
    on = json.loads(capsys.readouterr().out)
    assert "screen" not in off["split"] and {c["repeats"] for c in off["candidates"]} == {2}
    assert on["split"]["screen"]["z"] == 2.0
    assert {c["repeats"] for c in on["candidates"]} <= {1, 2}


def test_tables_gather_without_the_later_repeats_of_first_repeat_only_columns():
    """``RepeatTables.gather(cols, later_of_single=False)`` (what the loss matrices read,
    with ``row_losses``' single flags) equals the full gather on the first repeat and on
    every repeat of the refitted columns; the full gather copies a first-repeat-only
    column's first repeat into the later ones."""
    from fcps_core.selection.folds import RepeatTables
    r = np.random.default_rng(4)
    values = r.uniform(size=(3, 5, 7))
    index = r.integers(0, 7, size=(3, 9))
    single = np.array([False, True, False, True, True])
    tables = RepeatTables(values, index, single)
    cols = np.array([4, 0, 1, 2])
    full = tables.gather(cols)
    part = tables.gather(cols, later_of_single=False)
    assert np.array_equal(full[0], part[0])
    refitted = np.flatnonzero(~single[cols])
    assert np.array_equal(full[:, :, refitted], part[:, :, refitted])
    for k, c in enumerate(cols):
        for rep in range(3):
            expected = values[0, c, index[0]] if single[c] else values[rep, c, index[rep]]
            assert np.array_equal(full[rep, :, k], expected)
