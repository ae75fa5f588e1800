"""What a selection hands its frontier, captured for benchmarks that replay or re-score it
without re-running the selection (bench/replay_time.py, bench/bagged_choice.py)."""

from __future__ import annotations

from contextlib import contextmanager


@contextmanager
def frontier_inputs():
    """For the block, :func:`fcps_core.selection.frontier.compute_frontier` records its last
    call's ``result`` and ``heldout`` in the dict this yields (keys ``result``, ``heldout``)
    and then computes the frontier as usual."""
    from fcps_core.selection import frontier
    captured: dict = {}
    compute = frontier.compute_frontier

    def capture(result, heldout, *args, **kwargs):
        captured.update(result=result, heldout=heldout)
        return compute(result, heldout, *args, **kwargs)
    frontier.compute_frontier = capture
    try:
        yield captured
    finally:
        frontier.compute_frontier = compute
