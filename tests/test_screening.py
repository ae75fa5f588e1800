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
from fcps_core.selection.screening import best_dominators, first_repeat_risks, screen_candidates

MENU = dict(families=["table", "logistic", "mean_iso", "ridge_iso", "one_coin_iso", "ds_jury"], k_max=5)


# -- the rule on a toy, by hand ---------------------------------------------------------------
# Four rows in two groups of two, labels 0, MSE: a candidate's loss is its prediction squared.
#   A (1 judge)  p = .1 .1 .1 .1   losses .01 each          r = .01  group sums .02 .02   u = 0
#   B (2 judges) p = .5 .5 .3 .3   losses .25 .25 .09 .09   r = .17  sums .50 .18, residuals
#                +.16 -.16, u = sqrt(2 * (.16^2 + .16^2)) / 4 = .08
#   C (2 judges) p = .2 .2 .2 .2   losses .04 each          r = .04                        u = 0
#   D (1 judge)  p = .3 .3 .1 .1   losses .09 .09 .01 .01   r = .05  sums .18 .02, residuals
#                +.08 -.08, u = sqrt(2 * (.08^2 + .08^2)) / 4 = .04
TOY_PRED = np.array([[.1, .1, .1, .1], [.5, .5, .3, .3], [.2, .2, .2, .2], [.3, .3, .1, .1]])
TOY_MEANS = np.array([.01, .17, .04, .05])
TOY_SE = np.array([0.0, .08, 0.0, .04])
TOY_JUDGES = np.array([1, 2, 2, 1])


def toy_screen(z, cost=None):
    return screen_candidates(TOY_MEANS, TOY_SE, list("ABCD"), TOY_JUDGES, cost, z)


def test_first_repeat_risks_are_the_clustered_means_and_ses():
    heldout = HeldOut(rows=np.arange(4), values=TOY_PRED.T[None, :, :], inverse=None, vcol=np.arange(4),
                      baselines={}, y=np.zeros(4), groups=np.array([0, 0, 1, 1]))
    means, se = first_repeat_risks(heldout, "mse")
    assert np.allclose(means, TOY_MEANS, rtol=0, atol=1e-15)
    assert np.allclose(se, TOY_SE, rtol=0, atol=1e-15)


def test_toy_without_costs():
    # every candidate's best with no more judges is A (r = .01, u = 0), so U = 0:
    # B: gap .16 against z * (.08 + 0); C: gap .03 against z * 0; D: gap .04 against z * .04
    assert toy_screen(2.05).screened == {"C"}                # B: .16 < .164; D: .04 < .082
    assert toy_screen(1.9).screened == {"B", "C"}             # .16 > .152
    assert toy_screen(0.99).screened == {"B", "C", "D"}       # .04 > .0396
    assert toy_screen(2.05).kept == {"A", "B", "D"}


def test_toy_with_costs():
    # costs A 5, B 1, C 6, D 1: B's best with no more judges and no higher cost is D
    # (r .05); the candidates no worse than D are A, C, D, the largest SE among them D's .04:
    # B's gap .12 against 2 * (.08 + .04) = .24 -> kept. D: only itself within cost 1 -> kept.
    # C (cost 6): every candidate qualifies, the best is A: gap .03 > 0 -> screened.
    screen = toy_screen(2.0, cost=np.array([5.0, 1.0, 6.0, 1.0]))
    assert screen.screened == {"C"}
    assert toy_screen(0.49, cost=np.array([5.0, 1.0, 6.0, 1.0])).screened == {"B", "C"}   # .12 > .1176


def test_best_dominators_by_judges_and_cost():
    means = np.array([.01, .17, .04, .05])
    assert best_dominators(means, TOY_JUDGES, None).tolist() == [0, 0, 0, 0]
    assert best_dominators(means, TOY_JUDGES, np.array([5.0, 1.0, 6.0, 1.0])).tolist() == [0, 3, 0, 3]
    # equal means: the lower index
    assert best_dominators(np.array([.2, .1, .1]), np.array([1, 1, 1]), None).tolist() == [1, 1, 1]


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


@pytest.fixture(scope="module", params=["additive", "mixed"])
def screened_runs(request):
    panel = make_regime(request.param, rows=1200, judges=6, seed=4, group_size=3, tie_rate=0.1)
    blocks = make_blocks(panel, seed=0)
    options = dict(seed=1, n_boot=100, **MENU)
    screened = FCPSSelector(n_jobs=1, **options).fit(panel, blocks)
    full = FCPSSelector(n_jobs=1, screen_se=None, **options).fit(panel, blocks)
    one = FCPSSelector(n_jobs=1, screen_se=None, repeats=1, **options).fit(panel, blocks)
    return panel, blocks, options, screened, full, one


def test_the_screen_drops_candidates_here(screened_runs):
    *_, screened, full, one = screened_runs
    info = screened.protocol_info["screen"]
    assert info["n_screened"] > 10 and info["n_kept"] > 10
    assert sum(c.repeats == 1 for c in screened.candidates) == info["n_screened"]
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
