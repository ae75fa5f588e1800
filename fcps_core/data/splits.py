"""Grouped S/M/V/T label blocks (paper section "Human-Label Accounting").

* S (selection) builds judge paths, M (calibration) fits aggregators, V (validation) picks
  the candidate, T (research test) only audits the selected decision.
* Blocks are drawn by ``group_id`` so swapped or duplicated copies of one comparison never
  cross blocks. Only labelled rows enter blocks; unlabelled rows stay available as
  unlabelled traffic (used by ``ds_jury``'s EM and nothing else).
* A user ``block`` column is used exactly.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from ..wording import count_of, noun_for
from ..errors import SplitError
from .panel import Panel

BLOCKS = ("S", "M", "V", "T")
#: the CLI flag of each block's row count (named in errors about the counts)
COUNT_FLAGS = ("--n-select", "--n-cal", "--n-val", "--n-test")


def _largest_count(want: list[int]) -> str:
    k = max(range(len(want)), key=lambda i: want[i])
    return f"{COUNT_FLAGS[k]} {want[k]}"


@dataclass(frozen=True)
class Blocks:
    """Row indices of the four blocks (T may be empty)."""

    S: np.ndarray
    M: np.ndarray
    V: np.ndarray
    T: np.ndarray
    seed: int | None = None
    source: str = "manual"  # ratio | counts | column (drawn here) | manual (built by hand)

    def sizes(self) -> dict[str, int]:
        return {f"n_{b}": int(len(getattr(self, b))) for b in BLOCKS}

    def as_labels(self, n_rows: int) -> np.ndarray:
        out = np.full(n_rows, "", dtype=object)
        for b in BLOCKS:
            out[getattr(self, b)] = b
        return out


def parse_ratio(text: str, *, name: str = "split") -> tuple[float, ...]:
    """Parse ``"1:2:1"`` (S:M:V) or ``"1:2:1:1"`` (S:M:V:T); errors name ``name`` (the CLI
    passes its flag, ``--split``)."""
    try:
        parts = tuple(float(p) for p in text.split(":"))
    except ValueError:
        raise SplitError(f"{name} {text!r} is not of the form S:M:V or S:M:V:T; give positive numbers "
                         "separated by colons (e.g. 1:2:1)") from None
    if len(parts) not in (3, 4) or not math.isfinite(sum(parts)) or any(p < 0 for p in parts) \
            or not all(p > 0 for p in parts[:3]):
        raise SplitError(f"{name} {text!r}: give positive S:M:V parts and an optional T part "
                         "(finite numbers, e.g. 1:2:1 or 1:2:1:1)")
    return parts


def blocks_from_column(panel: Panel) -> Blocks:
    if panel.blocks is None:
        raise SplitError("the panel has no block column")
    out = {b: np.flatnonzero(panel.blocks == b) for b in BLOCKS}
    for b in ("S", "M", "V"):
        if out[b].size == 0:
            raise SplitError(f"the block column assigns no rows to block {b}; "
                             "S, M and V each need labelled rows")
    _check_groups_do_not_cross(panel, out)
    return Blocks(**out, seed=None, source="column")


def check_blocks(panel: Panel, blocks: Blocks) -> None:
    """Blocks must not share rows, and (for hand-built blocks) no group may span two blocks."""
    rows = np.concatenate([getattr(blocks, b) for b in BLOCKS]).astype(np.int64)
    if len(rows) and (rows.min() < 0 or rows.max() >= panel.n_rows):
        raise SplitError(f"block rows must be between 0 and {panel.n_rows - 1}")
    seen = np.zeros(panel.n_rows, dtype=np.int8)
    np.add.at(seen, rows, 1)
    if (seen > 1).any():
        r = int(np.flatnonzero(seen > 1)[0])
        inside = [b for b in BLOCKS if r in set(getattr(blocks, b).tolist())]
        raise SplitError(f"row {r} (item {panel.item_ids[r]!r}) is in more than one block ({', '.join(inside)}); "
                         "blocks must be disjoint")
    if blocks.source == "manual":
        _check_groups_do_not_cross(panel, {b: getattr(blocks, b) for b in BLOCKS})


def _check_groups_do_not_cross(panel: Panel, blocks: dict[str, np.ndarray]) -> None:
    owner: dict[str, str] = {}
    for b in BLOCKS:
        for g in set(panel.group_ids[blocks[b]].tolist()):
            if g in owner and owner[g] != b:
                raise SplitError(f"group {g!r} has rows in blocks {owner[g]} and {b}; "
                                 "a group must stay in one block")
            owner[g] = b


def draw_blocks(panel: Panel, *, ratio: tuple[float, ...] = (1, 2, 1), test_share: float = 0.0,
                counts: dict[str, int] | None = None, seed: int = 0) -> Blocks:
    """Draw grouped blocks from the labelled rows.

    ``ratio`` S:M:V (optionally :T) divides all labelled rows; ``test_share`` first moves
    that share of rows to T. ``counts`` (keys n_S, n_M, n_V, optional n_T) asks for row
    counts instead; the remaining labelled rows are left unused. Group boundaries make
    counts approximate by at most one group per block.
    """
    labelled = np.flatnonzero(panel.labelled)
    if labelled.size == 0:
        raise SplitError("the panel has no labelled rows: selection needs human labels")
    groups = panel.group_ids[labelled]
    uniq, inverse = np.unique(groups, return_inverse=True)
    sizes = np.bincount(inverse)
    rng = np.random.default_rng(seed)
    order = rng.permutation(len(uniq))
    n_lab = labelled.size
    if counts is not None:
        want = [int(counts.get(f"n_{b}", 0) or 0) for b in BLOCKS]
        for b, w, flag in zip(BLOCKS, want, COUNT_FLAGS):
            if w < (0 if b == "T" else 1):
                raise SplitError(f"n_{b} ({flag}) must be at least {0 if b == 'T' else 1} (got {w})")
        if sum(want) > n_lab:
            raise SplitError(f"the blocks need {sum(want)} labelled rows "
                             f"(S {want[0]}, M {want[1]}, V {want[2]}, T {want[3]}) "
                             f"but the panel has only {n_lab}; lower the counts "
                             f"({_largest_count(want)} is the largest) or label more rows")
        source = "counts"
    else:
        parts = list(ratio) + [0.0] * (4 - len(ratio))
        if not 0.0 <= test_share < 1.0:
            raise SplitError(f"test_share (--test-share) must be a share from 0 up to (not including) 1 "
                             f"(got {test_share})")
        if len(ratio) == 4 and test_share:
            raise SplitError("give the test block either as a fourth ratio part or as a test share, not both")
        if test_share:
            deploy = np.asarray(parts[:3]) / sum(parts[:3]) * (1 - test_share)
            parts = list(deploy) + [test_share]
        total = sum(parts)
        want = [int(round(n_lab * p / total)) for p in parts]
        want[1] += n_lab - sum(want)  # rounding slack goes to calibration
        source = "ratio"
    needed_blocks = sum(1 for w in want if w > 0)
    if len(uniq) < needed_blocks:
        raise SplitError(f"the panel has {count_of(len(uniq), 'labelled group')} but {needed_blocks} blocks "
                         "need at least one group each; label more groups or use fewer blocks")
    # Walk shuffled groups, filling blocks in S, M, V, T order to their row targets. A
    # block that holds a group already passes the next one on when the groups left are no
    # more than the later blocks that still need one: large groups would otherwise overshoot
    # a target and leave a later block empty (5 groups of 60 rows for 75:150:75 gave S two,
    # M three, V none), where one group each is possible.
    assign = np.full(len(uniq), -1)
    filled = [0, 0, 0, 0]
    b = 0
    for left, g in zip(range(len(order), 0, -1), order):
        while b < 4 and (want[b] == 0 or filled[b] >= want[b]
                         or (filled[b] > 0 and left <= sum(1 for w in want[b + 1:] if w > 0))):
            b += 1
        if b == 4:
            break
        assign[g] = b
        filled[b] += sizes[g]
    if source == "ratio":
        assign[assign < 0] = 1  # group-boundary slack goes to calibration
    # Every non-empty block must hold at least one group.
    for blk in range(4):
        if want[blk] > 0 and not (assign == blk).any():
            raise SplitError(f"too few labelled groups to give block {BLOCKS[blk]} any rows "
                             f"({len(uniq)} groups for targets {want}); label more groups")
    row_block = assign[inverse]
    out = {name: labelled[row_block == k] for k, name in enumerate(BLOCKS)}
    return Blocks(**out, seed=seed, source=source)


def repeated_blocks(panel: Panel, n_splits: int, *, seed: int = 0, **kwargs) -> list[Blocks]:
    """``n_splits`` independent grouped splits; split r uses a seed derived from ``seed``."""
    seeds = np.random.SeedSequence(seed).generate_state(n_splits)
    return [draw_blocks(panel, seed=int(s), **kwargs) for s in seeds]


def make_blocks(panel: Panel, *, split: str | tuple[float, ...] | None = None,
                test_share: float = 0.0, counts: dict[str, int] | None = None,
                seed: int = 0, use_block_column: bool = True) -> Blocks:
    """The blocks the selector will use: the user's block column when present, else a
    seeded grouped draw by ratio (default 1:2:1) or counts."""
    if use_block_column and panel.blocks is not None and split is None and counts is None:
        return blocks_from_column(panel)
    ratio = parse_ratio(split) if isinstance(split, str) else tuple(split or (1, 2, 1))
    return draw_blocks(panel, ratio=ratio, test_share=test_share, counts=counts, seed=seed)
