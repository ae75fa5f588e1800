"""Shared fixtures and the import path of the test suite.

* ``tests/`` and the project root are importable: ``store_helpers``, ``paper_protocol`` and
  ``reference.row_reader`` (test-only oracles) and ``bench.reference`` (the frozen baselines
  benchmarks time against) are imported by several test modules under one name each.
* Fixtures used by more than one module live here: a fresh ``store``, a store already
  holding earlier work (``populated_store``: panel "earlier" and a run, module-scoped;
  ``populated_run``: panel "base" and a run built per test, returned with the panel and the
  run id), an uploadable panel file (``upload_csv_bytes``), and the golden ``toy_panel``:
  12 items, 3 binary judges, 4 groups, written out by hand so the family tests can check
  fitted values against arithmetic done on paper.
"""

import sys
from dataclasses import dataclass
from pathlib import Path

import numpy as np

import pytest

TESTS = Path(__file__).resolve().parent
ROOT = TESTS.parent
for path in (str(TESTS), str(ROOT)):
    if path not in sys.path:
        sys.path.insert(0, path)

from fcps_core import make_blocks  # noqa: E402
from fcps_core.store import Store  # noqa: E402
from fcps_core.paper.synthetic import make_regime  # noqa: E402
from fcps_core.files.csv_writer import write_wide_csv  # noqa: E402
from paper_protocol import select  # noqa: E402


@pytest.fixture
def store(tmp_path):
    return Store(tmp_path / "store.duckdb")


def _earlier_work(path, name: str, **facts):
    store = Store(path)
    panel = make_regime("mixed", rows=400, judges=4, seed=0)
    store.add_panel(panel, name=name, licence="MIT", **facts)
    result = select(panel, make_blocks(panel, split="1:2:1:1", seed=0), families=["table", "logistic"],
                    paths=["info_first"])
    run_id = store.save_selection(result, panel=name)
    return store, panel, run_id


@pytest.fixture(scope="module")
def populated_store(tmp_path_factory):
    """A store holding a panel and a run: what a rejected import must leave untouched."""
    return _earlier_work(tmp_path_factory.mktemp("store") / "store.duckdb", "earlier",
                         provenance={"why": "kept"})[0]


@pytest.fixture
def populated_run(tmp_path):
    """A store with a panel and a finished run (store, panel, run id): the earlier work
    that must survive."""
    return _earlier_work(tmp_path / "shared.duckdb", "base")


@pytest.fixture(scope="module")
def upload_csv_bytes(tmp_path_factory) -> bytes:
    """A 600-row, 4-judge mixed-regime panel as the bytes of an uploaded CSV file."""
    path = tmp_path_factory.mktemp("up") / "mixed.csv"
    write_wide_csv(make_regime("mixed", rows=600, judges=4, seed=3, tie_rate=0.05), str(path))
    return path.read_bytes()


#: The golden toy panel (like crowd-kit's toy datasets): small enough to compute every fitted
#: value by hand. Columns: item, group, the three judges' binary verdicts, the label.
TOY_ROWS = """\
i01 g1 1 1 1 1
i02 g1 1 1 0 1
i03 g1 1 0 1 1
i04 g2 1 0 0 0
i05 g2 0 1 1 1
i06 g2 0 1 0 0
i07 g3 0 0 1 0
i08 g3 0 0 0 0
i09 g3 1 1 1 1
i10 g4 1 0 1 0
i11 g4 0 1 1 1
i12 g4 0 0 0 0
"""


@dataclass(frozen=True)
class ToyPanel:
    """The toy panel as plain arrays (read off :data:`TOY_ROWS`, no fcps code involved).

    Facts a test may use, each counted by hand from the table:

    * labels: 6 of 12 positive, ybar = 1/2;
    * judge 1 = 1 on i01 i02 i03 i04 i09 i10 (labels 1 1 1 0 1 0: 4 of 6), = 0 on the other
      six (labels 1 0 0 0 1 0: 2 of 6);
    * judges (1, 2) cells: (1,1) i01 i02 i09 -> 3/3; (1,0) i03 i04 i10 -> 1/3;
      (0,1) i05 i06 i11 -> 2/3; (0,0) i07 i08 i12 -> 0/3;
    * all three judges: every one of the 8 patterns occurs, four of them twice
      ((1,1,1) i01 i09 -> 2/2, (1,0,1) i03 i10 -> 1/2, (0,1,1) i05 i11 -> 2/2, (0,0,0) i08 i12
      -> 0/2) and four once ((1,1,0) i02 -> 1, (1,0,0) i04 -> 0, (0,1,0) i06 -> 0,
      (0,0,1) i07 -> 0);
    * verdicts equal to the label: judge 1 on 8 of 12 rows, judge 2 on 10, judge 3 on 9;
    * mean verdict 1 on i01 i09 (labels 1 1), 2/3 on i02 i03 i05 i10 i11 (1 1 1 0 1),
      1/3 on i04 i06 i07 (0 0 0), 0 on i08 i12 (0 0).
    """

    items: list
    groups: list
    verdicts: np.ndarray        # (12, 3) int, 0/1
    labels: np.ndarray          # (12,) float, 0/1

    @property
    def frame(self):
        """The wide panel as a DataFrame (item_id, group_id, J1..J3, label)."""
        import pandas as pd
        frame = pd.DataFrame({"item_id": self.items, "group_id": self.groups})
        for j in range(self.verdicts.shape[1]):
            frame[f"J{j + 1}"] = self.verdicts[:, j]
        frame["label"] = self.labels
        return frame

    def patterns(self, k: int) -> list:
        """The prefix patterns of judges 1..k, written as mixed-radix ids by hand: level 1 is
        judge 1's verdict, level 2 is 2 x judge 1 + judge 2, level 3 adds 4 x judge 1."""
        v = self.verdicts
        levels = [v[:, 0], 2 * v[:, 0] + v[:, 1], 4 * v[:, 0] + 2 * v[:, 1] + v[:, 2]]
        return [lvl.astype(np.int64) for lvl in levels[:k]]


def _toy_panel() -> ToyPanel:
    rows = [line.split() for line in TOY_ROWS.splitlines()]
    return ToyPanel(items=[r[0] for r in rows], groups=[r[1] for r in rows],
                    verdicts=np.array([[int(x) for x in r[2:5]] for r in rows], dtype=np.int64),
                    labels=np.array([float(r[5]) for r in rows]))


@pytest.fixture
def toy_panel() -> ToyPanel:
    """The golden toy panel (:class:`ToyPanel`): fresh arrays per test."""
    return _toy_panel()
