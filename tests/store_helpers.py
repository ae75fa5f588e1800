"""Shared helpers for the store and import tests (not a test module)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
VENV_PYTHON = ROOT / ".venv" / "bin" / "python"
PYTHON = str(VENV_PYTHON) if VENV_PYTHON.exists() else sys.executable


def assert_same_panel(a, b, *, check_name: bool = False) -> None:
    """Two panels hold the same rows, labels, groups, blocks and judge encodings."""
    assert a.item_ids.tolist() == b.item_ids.tolist()
    assert a.group_ids.tolist() == b.group_ids.tolist()
    np.testing.assert_array_equal(a.labels, b.labels)
    assert a.label_note == b.label_note
    assert (a.blocks is None) == (b.blocks is None)
    if a.blocks is not None:
        assert a.blocks.tolist() == b.blocks.tolist()
    assert [j.name for j in a.judges] == [j.name for j in b.judges]
    for x, y in zip(a.judges, b.judges):
        assert (x.schema, x.vocab, x.scalar_map, x.value_range) == \
            (y.schema, y.vocab, y.scalar_map, y.value_range), x.name
        assert (x.codes is None) == (y.codes is None)
        if x.codes is not None:
            np.testing.assert_array_equal(x.codes, y.codes)
        assert (x.values is None) == (y.values is None)
        if x.values is not None:
            np.testing.assert_array_equal(x.values, y.values)
    if check_name:
        assert a.name == b.name


def csv_text(rows: list[list[str]], sep: str = ",") -> str:
    return "".join(sep.join(r) + "\n" for r in rows)


def good_rows(n: int = 60, seed: int = 0, judges: int = 3) -> list[list[str]]:
    """A valid wide pairwise panel (header first): labels 0/1, two rows per group, judges
    that agree with the label 85%, 75%, 65% of the time plus a few ties."""
    rng = np.random.default_rng(seed)
    rows = [["item_id", "group_id", "label"] + [f"j{k + 1}" for k in range(judges)]]
    acc = np.linspace(0.85, 0.65, judges)
    for i in range(n):
        y = int(rng.integers(0, 2))
        outs = []
        for a in acc:
            u = rng.random()
            outs.append("tie" if u < 0.05 else ("A" if (rng.random() < a) == (y == 1) else "B"))
        rows.append([f"it{i}", f"g{i // 2}", str(y)] + outs)
    return rows


def write(path: Path, content: str | bytes) -> Path:
    if isinstance(content, bytes):
        path.write_bytes(content)
    else:
        path.write_text(content, encoding="utf-8", newline="")
    return path


def write_big_csv(path: Path, rows: int, judges: int, seed: int = 0) -> None:
    """A large wide pairwise panel written in vectorised chunks."""
    rng = np.random.default_rng(seed)
    with open(path, "w", encoding="utf-8", newline="") as fh:
        fh.write("item_id,group_id,label," + ",".join(f"judge{j}" for j in range(judges)) + "\n")
        for start in range(0, rows, 200_000):
            n = min(200_000, rows - start)
            y = rng.integers(0, 2, n)
            verdict = np.where(rng.random((n, judges)) < 0.8, y[:, None], 1 - y[:, None])
            tok = np.array(["B", "A"], dtype=object)[verdict]
            ids = np.arange(start, start + n).astype(str).astype(object)
            lines = ("it" + ids + ",g" + (np.arange(start, start + n) // 2).astype(str).astype(object)
                     + "," + y.astype(str).astype(object))
            for j in range(judges):
                lines = lines + "," + tok[:, j]
            fh.write("\n".join(lines.tolist()) + "\n")


def run_cli(*args: str, env: dict | None = None, timeout: float = 300,
            cwd: Path = ROOT) -> tuple[int, str, str]:
    """``python -m fcps_core ARGS`` from the project root; (returncode, stdout, stderr)."""
    full_env = {**os.environ, **(env or {})}
    proc = subprocess.run([PYTHON, "-m", "fcps_core", *args], cwd=cwd, capture_output=True,
                          timeout=timeout, env=full_env)
    return (proc.returncode, proc.stdout.decode("utf-8", "replace"),
            proc.stderr.decode("utf-8", "replace"))


def assert_one_line_error(result: tuple[int, str, str]) -> str:
    """The CLI error contract: exit 2, empty stdout, one ``fcps: error:`` line."""
    code, out, err = result
    assert "Traceback" not in err, err
    assert code == 2, (code, out, err)
    assert out == "", out
    lines = err.splitlines()
    assert len(lines) == 1, err
    assert lines[0].startswith("fcps: error:"), err
    assert err.endswith("\n")
    return lines[0]


def demo_store(path) -> str:
    """A small seeded store (LLMBar, a parity regime, their runs) for the dashboard tests;
    returns its path. Seeding marks the store, so the app does not seed it again."""
    from fcps_core.seed import SeedSpec, seed_store
    from fcps_core.store import Store
    spec = SeedSpec(real=("llmbar",), regimes=("parity",), rows=1500, judges=6, k_max=4,
                    families=("table", "backoff", "one_coin_iso", "logistic"),
                    sweep_budgets=(50, 200), sweep_splits=2,
                    sweep_sizes={"n_select": 150, "n_val": 150, "n_test": 300})
    seed_store(Store(path), spec)
    return str(path)


def _tables(con) -> dict:
    return {name: sql for name, sql in con.execute(
        "SELECT table_name, sql FROM duckdb_tables() WHERE database_name = current_database()").fetchall()}


def as_version_7(path) -> None:
    """Turn a store file (not open in this process) into what fcps with schema 7 wrote: no
    run_deployed table, no schema 8; checked against a database built by the migrations up to
    7 alone, so the file is a real version-7 store holding runs the save path wrote."""
    import duckdb
    from fcps_core.store import migrate
    con = duckdb.connect(str(path))
    con.execute("DROP TABLE IF EXISTS run_deployed")
    con.execute("DELETE FROM schema_version WHERE version = 8")
    reference = duckdb.connect()
    assert migrate(reference, target=7) == [1, 2, 3, 4, 5, 6, 7]
    assert _tables(con) == _tables(reference)
    con.close()


def edit_summary(path, run_id: int, edit) -> None:
    """Change a stored run's summary (its result JSON) by ``edit(dict)``: a run stored by an
    older fcps whose result lacked a field."""
    import json
    import duckdb
    con = duckdb.connect(str(path))
    (text,) = con.execute("SELECT summary FROM runs WHERE run_id = ?", [run_id]).fetchone()
    summary = json.loads(text)
    edit(summary)
    con.execute("UPDATE runs SET summary = ? WHERE run_id = ?", [json.dumps(summary), run_id])
    con.close()
