"""Shared fixtures and the import path of the test suite.

* ``tests/`` and the project root are importable: ``store_helpers``, ``paper_protocol`` and
  ``reference.row_reader`` (test-only oracles) and ``bench.reference`` (the frozen baselines
  benchmarks time against) are imported by several test modules under one name each.
* Fixtures used by more than one module live here: a fresh ``store``, a store already
  holding earlier work (``populated_store``: panel "earlier" and a run, module-scoped;
  ``populated_run``: panel "base" and a run built per test, returned with the panel and the
  run id), and an
  uploadable panel file (``upload_csv_bytes``).
"""

import sys
from pathlib import Path

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
