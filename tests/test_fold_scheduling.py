"""Where and when the cross-fitted protocol's work runs changes no result.

* The later repeats' folds (after the screen): the selecting process runs the remainder a
  last round would leave to one worker (:func:`.crossfit.own_share`); any split between it
  and the workers gives the sequential run's answer.
* The average of tied members is summed on the table rows and gathered once
  (:meth:`.folds.RepeatTables.column_mean`), to the bit the mean of the gathered columns
  that NumPy computes (:func:`.folds.reduce_order_sum` follows its summation order); the
  member lookup takes a column into place (:meth:`.folds.RepeatTables.column`).
* Memory a fold run in the selecting process freed goes back to the system
  (:func:`fcps_core.process_memory.release_freed_memory`).
"""

from __future__ import annotations

import numpy as np
import pytest

from fcps_core import make_blocks
from fcps_core.paper.synthetic import make_regime
from fcps_core.selection import FCPSSelector, crossfit
from fcps_core.process_memory import release_freed_memory
from fcps_core.worker_pool import run_tasks
from fcps_core.selection.folds import RepeatTables, reduce_order_sum

MENU = dict(families=["table", "logistic", "mean_iso", "ridge_iso", "ds_jury"], k_max=4)


def _answer(result) -> dict:
    out = result.to_dict()
    out.pop("timings", None)
    return out


@pytest.fixture(scope="module")
def screened_panel():
    panel = make_regime("additive", rows=900, judges=5, seed=4, group_size=3, tie_rate=0.1)
    blocks = make_blocks(panel, seed=0)
    options = dict(seed=2, n_boot=100, **MENU)
    sequential = FCPSSelector(n_jobs=1, **options).fit(panel, blocks)
    return panel, blocks, options, sequential


def test_own_share_is_what_a_last_round_would_leave_to_fewer_workers():
    assert crossfit.own_share(5, 2) == 1          # 2 + 2 in the workers, 1 here
    assert crossfit.own_share(10, 2) == 0         # five full rounds
    assert crossfit.own_share(7, 3) == 1
    assert crossfit.own_share(8, 3) == 2
    assert crossfit.own_share(2, 2) == 0          # one round: every task in a worker
    assert crossfit.own_share(3, 4) == 0          # fewer tasks than workers
    assert crossfit.own_share(4, 1) == 0          # one worker: nothing to balance


@pytest.mark.parametrize("share", [lambda n, w: 0, lambda n, w: 1, lambda n, w: n - 2],
                         ids=["all-in-workers", "one-here", "most-here"])
def test_where_the_folds_run_changes_no_result(screened_panel, monkeypatch, share):
    panel, blocks, options, sequential = screened_panel
    assert sequential.protocol_info["screen"]["n_screened"] > 0        # a later repeat over kept keys
    calls = []
    monkeypatch.setattr(crossfit, "own_share", lambda n, w: calls.append((n, w)) or share(n, w))
    parallel = FCPSSelector(n_jobs=2, **options).fit(panel, blocks)
    assert calls == [(5, 2)]                      # the later repeat's five folds, two workers
    assert _answer(parallel) == _answer(sequential)


# -- the members' average on the table rows ---------------------------------------------------
@pytest.mark.parametrize("shape", [(2, 300), (1, 7), (3, 2), (2, 4097)])
@pytest.mark.parametrize("m", [1, 2, 3, 7, 8, 9, 15, 16, 17, 64, 127, 128, 129, 200, 300])
def test_reduce_order_sum_is_numpys_sum_over_a_contiguous_axis(shape, m):
    rng = np.random.default_rng(m * 31 + shape[1])
    # magnitudes spread over six decades: another addition order would show in the last bits
    A = rng.standard_normal(shape + (m,)) * 10.0 ** rng.uniform(-3, 3, size=m)
    terms = [A[..., j].copy() for j in range(m)]
    assert np.array_equal(reduce_order_sum(terms), np.ascontiguousarray(A).sum(axis=-1))
    assert np.array_equal(reduce_order_sum(terms) / m, np.ascontiguousarray(A).mean(axis=-1))


def test_a_later_addition_order_would_differ_here():
    """The check above can fail: plain left-to-right addition differs from NumPy's order
    on these values from eight terms on."""
    rng = np.random.default_rng(8 * 31 + 300)
    A = rng.standard_normal((2, 300, 8)) * 10.0 ** rng.uniform(-3, 3, size=8)
    plain = A[..., 0].copy()
    for j in range(1, 8):
        plain += A[..., j]
    assert not np.array_equal(plain, np.ascontiguousarray(A).sum(axis=-1))


@pytest.mark.parametrize("repeats", [1, 2, 3])
@pytest.mark.parametrize("marked", ["none", "some", "all"])
def test_column_mean_is_the_mean_of_the_gathered_columns(repeats, marked):
    rng = np.random.default_rng(repeats * 10 + len(marked))
    S, T, U = 24, 150, 400
    values = rng.standard_normal((repeats, S, T)) * 10.0 ** rng.uniform(-2, 2, size=(1, S, 1))
    index = rng.integers(0, T, size=(repeats, U))
    flags = {"none": None, "some": rng.random(S) < 0.4, "all": np.ones(S, dtype=bool)}[marked]
    tables = RepeatTables(values, index, flags)
    for m in (1, 2, 5, 9, 20):
        cols = rng.choice(S, size=m, replace=False)
        expected = np.ascontiguousarray(tables.gather(cols)).mean(axis=2)
        assert np.array_equal(tables.column_mean(cols), expected), m


# -- freed memory back to the system ----------------------------------------------------------
def _rss_bytes() -> int:
    with open("/proc/self/statm") as fh:
        return int(fh.read().split()[1]) * 4096


@pytest.mark.skipif(not __import__("sys").platform.startswith("linux"), reason="glibc's malloc_trim")
def test_freed_heap_memory_leaves_the_process():
    """Arrays under the allocator's own-pages threshold live on the heap; freed below a
    live one they stay in the process until :func:`fcps_core.process_memory.release_freed_memory`."""
    blocks = [np.ones(12_000) for _ in range(2_000)]         # 96 KB each: heap, about 190 MB
    last = blocks.pop()                                       # holds the heap's top
    del blocks
    before = _rss_bytes()
    assert release_freed_memory()
    after = _rss_bytes()
    assert before - after > 100 * 2 ** 20, (before, after)
    assert last.sum() == 12_000


_GROWING_BLOCKS = """
import resource, sys
from fcps_core.process_memory import keep_freed_memory
if sys.argv[1] == "keep":
    assert keep_freed_memory()
before = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
for mb in range(1, 31):          # 1 MB to 30 MB, each zero-filled (every page touched), then freed
    block = bytearray(mb << 20)
    del block
print(resource.getrusage(resource.RUSAGE_SELF).ru_minflt - before)
"""


@pytest.mark.skipif(not __import__("sys").platform.startswith("linux"), reason="glibc's mallopt")
def test_kept_freed_memory_is_reused_instead_of_faulted_in_again():
    """Blocks of growing size, each freed before the next: by default glibc maps each one
    afresh (its threshold for own mappings only climbs to the last size freed), so every
    page of every block is a new page fault, about 465 MB of pages in all; with
    :func:`fcps_core.process_memory.keep_freed_memory` they come from the heap, whose pages
    are reused (the largest block's 30 MB of faults). Each case in a fresh process: the
    settings are process-wide."""
    import subprocess
    import sys

    def faults(mode: str) -> int:
        done = subprocess.run([sys.executable, "-c", _GROWING_BLOCKS, mode], capture_output=True, text=True,
                              check=True, cwd=str(__import__("pathlib").Path(__file__).resolve().parents[1]))
        return int(done.stdout.split()[-1])
    plain, kept = faults("plain"), faults("keep")
    pages = (30 << 20) // 4096
    assert plain > 10 * pages, plain          # about 15 x: every block faulted in
    assert kept < 2 * pages, kept             # the largest block's pages, once


@pytest.mark.skipif(not __import__("sys").platform.startswith("linux"), reason="glibc's mallopt")
def test_fold_workers_keep_freed_memory_and_this_process_does_not():
    """The settings are the workers' (their process is the folds'), not the library
    host's: tasks started in worker processes run with them in force, and starting them
    leaves this process's allocator alone."""
    from fcps_core import process_memory
    before = process_memory.keeps_freed_memory()
    in_workers = list(run_tasks(2, process_memory.keeps_freed_memory, [(), (), ()]))
    assert in_workers == [True, True, True]
    assert process_memory.keeps_freed_memory() == before


@pytest.mark.parametrize("marked", ["none", "some"])
def test_a_column_taken_into_place_is_the_gathered_column(marked):
    rng = np.random.default_rng(7)
    values = rng.standard_normal((3, 10, 40))
    index = rng.integers(0, 40, size=(3, 90))
    tables = RepeatTables(values, index, None if marked == "none" else np.arange(10) % 3 == 0)
    for k in range(10):
        col = tables.column(k)
        assert col.flags.c_contiguous
        assert np.array_equal(col, tables.gather([k])[:, :, 0])


def test_member_ids_read_from_the_tables(screened_panel):
    """On a cross-fitted result (per-repeat tables, first-repeat-only columns among them):
    every stored column taken into place equals its gathered column, and the member ids
    read ahead from the tables equal those asked one at a time."""
    from fcps_core.selection.members import MemberLookup
    *_, result = screened_panel
    heldout, cands = result.heldout, result.candidates
    assert heldout.tables is not None and heldout.tables.first_repeat_only is not None
    _, first = heldout.columns()
    for k in first:
        assert np.array_equal(heldout.stored_column(k), heldout.stored([k])[:, :, 0])
    one_by_one = MemberLookup(heldout, cands)
    expected = [one_by_one[c] for c in range(len(cands))]
    assert MemberLookup(heldout, cands).ids(range(len(cands))).tolist() == expected
    assert len(set(expected)) < len(cands)        # some candidates are one model
