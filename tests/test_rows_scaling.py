"""The default (cross-fitted) protocol rewritten to grow linearly in rows (issue 25) makes
the same choices with the same figures as before.

The oracle is the protocol's code at commit 78ada3b, kept verbatim in
``bench/reference/selection_before`` (object group ids, raw-row held-out arrays, a set test
per fold in the learning-curve correction, the cell table scanned per pattern). Each test
runs both on the same selector, panel and blocks and compares the whole
``SelectionResult.to_dict()`` -- the chosen candidate and members, every candidate's risks,
SEs and diagnostics, the deployed-risk estimate with its interval and learning-curve
correction, the baselines, the tie and regime verdicts -- to 1e-9 relative. Panels: subsets
of the shipped LLMBar and HANNA files, synthetic regimes with groups of several rows and
tied outputs, and a synthetic panel of continuous judges (every row its own table row).
"""

import contextlib
import math
import re
from pathlib import Path

import numpy as np
import pytest

from bench.reference.selection_before import crossfit as before
from bench.reference.selection_before.cell_table import cell_table as cell_table_before
from fcps_core import make_blocks
from fcps_core.ingest import load_panel
from fcps_core.files.json_values import json_ready
from fcps_core.data.panel import JudgeColumn, Panel
from fcps_core.selection import FCPSSelector
from fcps_core.selection.crossfit import TableRows, fold_numbers, group_codes
from fcps_core.selection.folds import grouped_folds
from fcps_core.paper.synthetic import make_regime

DATA = Path(__file__).resolve().parent.parent / "data"
REL = 1e-9
ABS = 1e-12                  # figures that are zero up to rounding (a difference of equal risks)
SMALL_MENU = dict(families=["table", "logistic", "mean_iso", "ridge_iso", "one_coin_iso"], k_max=5)


def _unsigned_zeros(text: str) -> str:
    """``text`` with every signed 4-decimal zero ("+0.0000", "-0.0000") unsigned."""
    return re.sub(r"[+-](0\.0000)(?!\d)", r"\1", text)


def differences(a, b, path="", out=None) -> list[str]:
    """Every place two JSON-ready trees differ (floats: beyond REL relative / ABS absolute)."""
    out = [] if out is None else out
    if isinstance(a, dict) and isinstance(b, dict):
        for k in sorted(set(a) | set(b)):
            # the frontier (issue 24), members' weights and the one tie set (distinct models
            # within one paired SE of the best, not candidates near the selected one) are newer
            # than the reference: tests/test_frontier.py holds them; so is a candidate's
            # ``repeats`` (the screen after the first repeat: tests/test_screening.py)
            if k in ("timings", "select_seconds", "frontier", "weight", "tie", "repeats"):
                continue
            if k not in a or k not in b:
                out.append(f"{path}.{k}: present on one side only")
            elif k == "advice" and isinstance(a[k], str) and isinstance(b[k], str):
                # a gain that rounds to 0 prints "0.0000" with no sign (walk 6), newer than the
                # reference's "+0.0000" / "-0.0000": tests/test_explain.py holds that format
                differences(_unsigned_zeros(a[k]), _unsigned_zeros(b[k]), f"{path}.{k}", out)
            else:
                differences(a[k], b[k], f"{path}.{k}", out)
    elif isinstance(a, list) and isinstance(b, list):
        if len(a) != len(b):
            out.append(f"{path}: {len(a)} items against {len(b)}")
        for i, (x, y) in enumerate(zip(a, b)):
            differences(x, y, f"{path}[{i}]", out)
    elif isinstance(a, float) and isinstance(b, float):
        if not (math.isclose(a, b, rel_tol=REL, abs_tol=ABS) or (math.isnan(a) and math.isnan(b))):
            out.append(f"{path}: {a!r} against {b!r}")
    elif a != b:
        out.append(f"{path}: {a!r} against {b!r}")
    return out


class ReferenceMemberRule:
    """A held-out matrix's ``signature_lookup`` (the reference's or the new one's) read
    through the interface of :class:`fcps_core.selection.members.MemberLookup`:
    ``rule[c]`` and ``rule.ids(cands)``, which the frontier's replays read."""

    def __init__(self, lookup):
        self.lookup = lookup

    def __getitem__(self, c) -> int:
        return self.lookup[c]

    def __getattr__(self, name):
        return getattr(self.lookup, name)

    def ids(self, cands) -> np.ndarray:
        return np.array([self.lookup[c] for c in cands], dtype=np.int64)


def pre_dedupe_members(heldout, candidates):
    """The reference's member rule (identical held-out columns rounded to 12 decimals count
    once): issue 24 made members one per distinct model (fcps_core.selection.members),
    which the reference predates; these tests hold the row-scaling rewrite, so both sides
    run the reference's rule (tests/test_frontier.py holds the new one)."""
    return ReferenceMemberRule(heldout.signature_lookup())


@contextlib.contextmanager
def reference_member_rule():
    """Every reader of the member rule (the choice, the bootstrap, the rule replays of the
    frontier and of ``to_dict``'s drop-one table, :class:`fcps_core.selection.frontier.RuleReplay`)
    uses the reference's rule, :func:`pre_dedupe_members`; the reference's held-out matrix
    has no ``stored`` columns the newer rule reads."""
    with pytest.MonkeyPatch.context() as mp:
        from fcps_core.selection import frontier, honesty, members
        for module in (members, honesty, frontier):
            mp.setattr(module, "member_lookup", pre_dedupe_members)
        yield


def run_both(panel, blocks, **options):
    """(new result, reference result) of the cross-fitted selection with ``options``; the
    reference predates the screen after the first repeat, so the new run has none
    (tests/test_screening.py holds the screen)."""
    selector = FCPSSelector(**{"screen_se": None, **options})
    with reference_member_rule():
        new = selector.fit(panel, blocks)
    selector.validate(len(panel.judges))
    old = before.fit_crossfit(selector, panel, blocks)
    return new, old


def assert_same(panel, blocks, **options):
    new, old = run_both(panel, blocks, **options)
    with reference_member_rule():
        found = differences(json_ready(old.to_dict()), json_ready(new.to_dict()))
    assert not found, "\n".join(found[:20])
    # the chosen configuration, stated outright (to_dict holds it too)
    assert new.selected_index == old.selected_index and new.members == old.members
    assert new.deployed_risk is not None
    return new, old


def continuous_panel(rows: int, judges: int, seed: int, group_size: int = 3) -> Panel:
    """Metric-like judges: noisy views of a latent quality, rounded to 2-4 decimals (some
    tied scores); labels an error score mapped to [0, 1]; groups of ``group_size`` rows
    share a difficulty."""
    rng = np.random.default_rng(seed)
    group = np.arange(rows) // group_size
    q = rng.normal(size=rows) + 0.5 * rng.normal(size=group.max() + 1)[group]
    y = 1.0 - np.clip(np.round(rng.gamma(0.6, 6.0, rows) * np.exp(-q)), 0, 25) / 25.0
    cols = []
    for j in range(judges):
        x = np.round(q + rng.uniform(0.3, 1.5) * rng.normal(size=rows), int(rng.integers(2, 5)))
        cols.append(JudgeColumn(name=f"M{j + 1}", schema="continuous", codes=None, vocab=[], values=x))
    return Panel(item_ids=np.array([f"s{i}" for i in range(rows)], dtype=object),
                 group_ids=np.array([f"seg{g}" for g in group], dtype=object), labels=y, judges=cols,
                 name="continuous")


@pytest.fixture(scope="module")
def llmbar():
    return load_panel(str(DATA / "llmbar.csv"))


@pytest.fixture(scope="module")
def hanna():
    return load_panel(str(DATA / "hanna.csv"))


def test_llmbar_subset_same_choice_and_figures(llmbar):
    panel = llmbar.take(np.random.default_rng(1).permutation(llmbar.n_rows)[:420]).subset_judges(
        llmbar.judge_names[:12])
    assert_same(panel, make_blocks(panel, seed=0), seed=0, n_jobs=1, n_boot=100)


def test_hanna_subset_same_choice_and_figures(hanna):
    panel = hanna.take(np.arange(0, hanna.n_rows, 2)).subset_judges(hanna.judge_names[:10])
    assert_same(panel, make_blocks(panel, seed=1), seed=1, n_jobs=1, n_boot=100, **SMALL_MENU)


@pytest.mark.parametrize("regime,choice", [("additive", "tie_average"), ("mixed", "simplest_within_se"),
                                           ("parity", "argmin"), ("strength", "tie_average")])
def test_synthetic_regimes_same_choice_and_figures(regime, choice):
    panel = make_regime(regime, rows=900, judges=6, seed=4, group_size=3, tie_rate=0.1)
    assert_same(panel, make_blocks(panel, split="1:2:1:1", seed=0), seed=2, n_jobs=1, n_boot=120,
                choice=choice, **SMALL_MENU)


def test_continuous_judges_same_choice_and_figures():
    panel = continuous_panel(600, 6, seed=5)
    assert_same(panel, make_blocks(panel, seed=0), seed=0, n_jobs=1, n_boot=100, k_max=4)


def test_uncompressed_rows_same_choice_and_figures():
    """compress=False: every deployable row is its own distinct row and table row."""
    panel = make_regime("mixed", rows=500, judges=5, seed=7, group_size=2, tie_rate=0.1)
    assert_same(panel, make_blocks(panel, split="1:2:1:1", seed=0), seed=3, n_jobs=1, n_boot=100,
                compress=False, **SMALL_MENU)


def test_worker_processes_same_choice_and_figures():
    """Folds and the correction's refits in worker processes, the final refit overlapping
    them: the results of a sequential run."""
    panel = make_regime("additive", rows=2500, judges=5, seed=8, group_size=2)
    assert_same(panel, make_blocks(panel, seed=0), seed=4, n_jobs=2, n_boot=100, **SMALL_MENU)


def test_held_out_predictions_equal_the_raw_matrix_bit_for_bit():
    """The per-repeat tables gathered onto the raw rows are the reference's raw-row
    held-out matrix, value for value."""
    panel = make_regime("mixed", rows=800, judges=5, seed=9, group_size=2, tie_rate=0.1)
    new, old = run_both(panel, make_blocks(panel, split="1:2:1:1", seed=0), seed=1, n_jobs=1, n_boot=50,
                        **SMALL_MENU)
    assert new.heldout.tables is not None
    a, b = np.asarray(new.heldout.preds), np.asarray(old.heldout.preds)
    assert a.shape == b.shape and np.array_equal(a, b)
    assert np.array_equal(new.heldout.baselines["majority_vote"], old.heldout.baselines["majority_vote"])


def test_table_rows_are_bounded_by_outputs_and_folds_not_rows():
    """10 two-valued judges: each repeat has at most 2^10 x folds table rows, however many
    deployable rows there are; every position's table row holds rows with its outputs and
    its fold."""
    rows = 12_000
    panel = make_regime("additive", rows=rows, judges=10, seed=0)
    D = np.arange(rows)
    sel = FCPSSelector(seed=0)
    fold_list = grouped_folds(group_codes(panel.group_ids), sel.folds, sel.repeats, sel.seed)
    from fcps_core.selection.folds import panel_output_digits
    digits = panel_output_digits(panel, D)
    t = TableRows(sel, D, fold_list, digits)
    assert t.n_table_rows <= 2 ** 10 * sel.folds < rows
    codes = np.column_stack([j.codes for j in panel.judges])
    for r, fold in enumerate(fold_numbers(sel, fold_list, rows)):
        rep = t.rep[r][t.inverse[r]]                     # each position's representative
        assert np.array_equal(codes[rep], codes) and np.array_equal(fold[rep], fold)


def test_group_codes_keep_the_sorted_id_order():
    ids = np.array(["g10", "g2", "g10", "a", "g2"], dtype=object)
    codes = group_codes(ids)
    assert codes.tolist() == [1, 2, 1, 0, 2]            # a < g10 < g2 as strings
    assert group_codes(np.zeros(0, dtype=object)).shape == (0,)


def rubric_panel(rows: int, judges: int, levels: int, seed: int) -> Panel:
    """Rubric judges of 1..``levels``: their codes follow the numbers (2 before 10), their
    cell labels sort as strings ("10" before "2"), so the cell table's last tie-break (the
    label) is not the code order."""
    from fcps_core.data.panel import build_judge_column
    rng = np.random.default_rng(seed)
    x = rng.integers(1, levels + 1, size=(rows, judges))
    y = (rng.random(rows) < (x.mean(axis=1) - 1) / (levels - 1)).astype(float)
    cols = [build_judge_column(f"R{j + 1}", [str(v) for v in x[:, j]]) for j in range(judges)]
    ids = np.array([f"i{i}" for i in range(rows)], dtype=object)
    return Panel(item_ids=ids, group_ids=ids.copy(), labels=y, judges=cols, name="rubric")


@pytest.fixture(scope="module")
def rubric_result():
    panel = rubric_panel(700, 3, 12, seed=11)
    assert {j.schema for j in panel.judges} == {"rubric"}
    return FCPSSelector(seed=0, n_jobs=1, n_boot=50, families=["table", "backoff"], k_max=3).fit(
        panel, make_blocks(panel, seed=0))


@pytest.mark.parametrize("limit", [None, 1, 3, 25, 60])
def test_cell_table_equals_the_per_pattern_scan(rubric_result, limit):
    result = rubric_result
    tables = 0
    for cand in (None, *range(len(result.candidates))):
        got, want = result.cell_table(cand, limit=limit), cell_table_before(result, cand, limit=limit)
        assert len(got) == len(want) and (limit is None or len(got) <= limit)
        found = differences(json_ready(want), json_ready(got))
        assert not found, "\n".join(found[:10])
        tables += bool(want)
    assert tables > 1


@pytest.mark.parametrize("collide", [False, True])
def test_signatures_equal_the_raw_rounded_columns(monkeypatch, collide):
    """Signature ids from digests equal prediction_signatures on the raw held-out matrix;
    with every digest equal (forced) the rounded bytes alone decide."""
    import hashlib

    from fcps_core.selection.choice import prediction_signatures
    panel = make_regime("mixed", rows=600, judges=5, seed=12, group_size=2, tie_rate=0.1)
    result = FCPSSelector(seed=0, n_jobs=1, n_boot=50, **SMALL_MENU).fit(
        panel, make_blocks(panel, split="1:2:1:1", seed=0))
    if collide:
        class Same:
            def __init__(self, *args, **kwargs):
                pass

            def digest(self):
                return b"0" * 16
        monkeypatch.setattr(hashlib, "blake2b", Same)
    h = result.heldout
    h._cache.pop("signatures", None)
    h._cache.pop("signature_lookup", None)
    want = prediction_signatures(np.asarray(h.preds))
    got = h.signatures()
    assert len(set(want.tolist())) > 1
    # the same partition of the candidates, numbered alike (first appearance)
    assert np.array_equal(got, want)
