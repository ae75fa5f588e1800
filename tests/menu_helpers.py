"""A stand-in for a menu candidate in the constraint tests (not a test module): what the
limits, the choice and the member rule read of a candidate, nothing fitted."""

from __future__ import annotations


class FakeCandidate:
    """Candidate ``index`` on ``judges`` (names "J<n>", whose number is the judge index),
    found by path rule ``rule``; ``stability`` is its judge-set stability (None: not
    recorded, as in the split protocol)."""

    def __init__(self, index, judges, rule="info_first", stability=1.0, family="ridge_iso"):
        self.index, self.judges, self.path_rule, self.stability = index, list(judges), rule, stability
        self.judge_idx = tuple(int(j[1:]) for j in judges)
        self.family, self.K, self.params = family, len(judges), {}
        self.path_label = ""


def option_runs(panel, option: str, **menu) -> dict:
    """The default selection of ``panel`` with the boolean selector field ``option`` off and
    on (keys False, True), on the same blocks and seed."""
    from fcps_core import make_blocks, select
    blocks = make_blocks(panel, seed=0)
    return {on: select(panel, blocks, seed=0, **{option: on}, **menu) for on in (False, True)}


def deployed(d: dict) -> set:
    """The candidate indices a ``select --json`` document deploys (its members, or its one
    candidate)."""
    return {m["index"] for m in d["selected"].get("members") or [d["selected"]]}


def limited_points_admitted(filtered: dict, unfiltered: dict, candidates, admitted) -> int:
    """Two ``select --json`` documents whose runs differ only in a filter of what a binding
    limit may choose: asserts that their frontier points over all judges and their deployed
    choices agree (the filter binds no unconstrained choice) and that every member of the
    filtered run's limited points is ``admitted(candidate)``; returns how many of the
    unfiltered run's limited points deploy a member that is not (the test's precondition:
    the filter changed something)."""
    J = len(filtered["panel"]["judges"])
    changed = 0
    for p_f, p_u in zip(filtered["frontier"], unfiltered["frontier"]):
        assert p_f["n_judges"] == p_u["n_judges"]
        if p_f["n_judges"] == J:
            assert p_f["members"] == p_u["members"]
            assert p_f["deployed_risk"] == p_u["deployed_risk"]
            continue
        assert all(admitted(candidates[m["index"]]) for m in p_f["members"])
        changed += any(not admitted(candidates[m["index"]]) for m in p_u["members"])
    assert filtered["selected"] == unfiltered["selected"]
    assert filtered["deployed_risk"] == unfiltered["deployed_risk"]
    return changed
