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
