"""Optional extras: the library and CLI work without the dashboard's packages, and a command
that needs one says which extra to install instead of an internal error."""

from __future__ import annotations

import subprocess
import sys

from conftest import _earlier_work
from store_helpers import ROOT, assert_one_line_error

BLOCK = "import sys; sys.modules.update({{n: None for n in {names!r}}}); "


def run_without(names: tuple[str, ...], *args: str) -> tuple[int, str, str]:
    """The CLI in a fresh interpreter where importing any of ``names`` fails, as it does when
    the extra that provides them is not installed."""
    code = (BLOCK.format(names=list(names)) +
            f"from fcps_core.cli import main; sys.exit(main({list(args)!r}))")
    proc = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, timeout=300)
    return proc.returncode, proc.stdout.decode(), proc.stderr.decode()


def test_html_export_without_plotly(tmp_path):
    path = tmp_path / "store.duckdb"
    _, _, run_id = _earlier_work(path, "base")
    no_figures = tmp_path / "plain.html"
    code, out, err = run_without(("plotly",), "export", f"run:{run_id}", "--format", "html", "--no-figures",
                                 "--out", str(no_figures), "--store", str(path))
    assert code == 0, err
    assert no_figures.read_text().startswith("<!DOCTYPE html>") and "Plotly.newPlot" not in no_figures.read_text()
    with_figures = tmp_path / "figures.html"
    line = assert_one_line_error(run_without(("plotly",), "export", f"run:{run_id}", "--format", "html",
                                             "--out", str(with_figures), "--store", str(path)))
    assert "pip install 'fcps[app]'" in line and "--no-figures" in line
    assert not with_figures.exists()


def test_a_missing_required_module_is_still_an_internal_error_line(tmp_path):
    """Only the declared optional packages get the install hint."""
    code, out, err = run_without(("scipy",), "select", str(ROOT / "data" / "llmbar.csv"), "--quiet")
    assert "Traceback" not in err and "pip install" not in err
    assert code == 1 and err.startswith("fcps: internal error"), err
