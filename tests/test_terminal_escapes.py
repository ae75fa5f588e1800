"""What reaches a terminal (issue 26, items 2 and 12).

Judge names, panel file names and other user strings with terminal control sequences (ESC
and BEL: retitle the terminal, clear the screen; C1 CSI; bidi overrides; carriage returns)
or newlines (a forged ``fcps: error:`` line) are printed by many commands. Every write of a
command passes through one sanitiser (``fcps_core.cli.render.TerminalGuard``), every name
inside a line is put on one line (``render.clean`` / ``one_line`` / ``render_table``), and
error lines indent their continuation lines. JSON output keeps the names exactly (escaped by
``json``), and data exports into a pipe stay byte-exact. ``--workers`` is capped by the usable
cores and the splits (``sweep --workers 200`` started 200 processes).
"""

from __future__ import annotations

import csv
import io
import json
import re
import sys
from types import SimpleNamespace

import numpy as np
import pytest

from fcps_core.cli import main
from fcps_core.cli import args as cli_args
from fcps_core.cli.render import TerminalGuard, error_line, one_line, safe

ESC = "esc\x1b]0;PWNED\x07\x1b[2J"          # retitle the terminal, clear the screen
C1 = "csi\x9b2J"                              # the 8-bit CSI
BIDI = "bidi\u202egnp.exe"                    # right-to-left override
FORGE = "multi\nfcps: error: forged"          # a line of its own
CR = "cr\rfcps: error: overwritten"           # back to column 0
JUDGES = [ESC, C1, BIDI, FORGE, CR]
#: anything that moves the cursor, recolours, retitles or reorders a terminal
RAW = re.compile("[\x00-\x09\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")


def _write_panel(path, rows: int = 160):
    rng = np.random.default_rng(3)
    with open(path, "w", newline="", encoding="utf-8") as fh:
        w = csv.writer(fh)
        w.writerow(["item_id", "label"] + JUDGES)
        for i in range(rows):
            y = int(rng.integers(0, 2))
            w.writerow([f"it{i}", y] + [y if rng.random() < 0.85 - 0.05 * k else 1 - y
                                        for k in range(len(JUDGES))])
    return str(path)


@pytest.fixture(scope="module")
def hostile(tmp_path_factory):
    """A store with the hostile panel imported from a file whose own name forges a line."""
    folder = tmp_path_factory.mktemp("esc")
    panel = _write_panel(folder / "evil\nfcps: error: forged by a file name\x1b[31m.csv")
    store = str(folder / "s.duckdb")
    assert main(["import", panel, "--name", "hp", "--store", store]) == 0
    return {"panel": panel, "store": store, "folder": folder}


def run(capsys, argv) -> tuple[int, str, str]:
    code = main(argv)
    out, err = capsys.readouterr()
    return code, out, err


def assert_terminal_safe(text: str, where: str) -> None:
    """No control sequence, and no line forged by a name (only real errors start a line
    with ``fcps: error:``, and only on stderr)."""
    text = text.replace("\r[", "[")       # the progress line's own return to column 0
    found = RAW.search(text.replace("\n", ""))
    assert not found, f"{where}: {found!r} in {text[:300]!r}"
    assert not any(line.startswith(("fcps: error: forged", "fcps: error: overwritten"))
                   for line in text.splitlines()), where


def test_the_guard_replaces_every_control_sequence():
    buf = io.StringIO()
    guard = TerminalGuard(buf)
    guard.write("\r[ 50%] progress")                          # the progress line's return: kept
    guard.write(" a\x1b[2Jb\x07c\x9bd\u202ee\rf\r\n")         # CSV line ends (\r\n) kept
    assert buf.getvalue() == "\r[ 50%] progress a?[2Jb?c?d?e?f\r\n"
    assert one_line("a\nb\r\nc\x1b") == "a?b??c?"
    assert safe("a\nb") == "a\nb"
    assert error_line("bad name 'x\nfcps: error: forged'") == "fcps: error: bad name 'x\n  fcps: error: forged'\n"


def test_select_prints_hostile_judge_names_safely(capsys, hostile):
    code, out, err = run(capsys, ["select", "hp", "--store", hostile["store"], "--families", "table",
                                  "one_coin_iso", "--k-max", "2", "--n-boot", "20"])
    assert code == 0, err
    assert_terminal_safe(out, "select stdout")
    assert_terminal_safe(err, "select stderr (progress)")
    assert "esc?]0;PWNED??[2J" in out             # the judge still recognisable


def test_select_json_keeps_the_names_exactly(capsys, hostile):
    code, out, err = run(capsys, ["select", "hp", "--store", hostile["store"], "--families", "one_coin_iso",
                                  "--k-max", "2", "--n-boot", "20", "--json", "--quiet"])
    assert code == 0, err
    assert not RAW.search(out.replace("\n", ""))           # json escapes them
    assert json.loads(out)["panel"]["judges"] == JUDGES    # and round-trips them exactly


def test_show_and_import_put_a_file_name_on_one_line(capsys, hostile):
    code, out, err = run(capsys, ["show", "hp", "--store", hostile["store"]])
    assert code == 0, err
    assert_terminal_safe(out, "show")
    assert "source evil?fcps: error: forged by a file name?[31m.csv" in out
    code, out, err = run(capsys, ["import", hostile["panel"], "--name", "hp2", "--store", hostile["store"]])
    assert code == 0 and "imported 'hp2'" in out
    assert_terminal_safe(out + err, "import")


def test_sweep_and_next_judge_print_safely(capsys, hostile):
    # a panel file (not stored): the sweep's header names it by its hostile file name
    code, out, err = run(capsys, ["sweep", hostile["panel"], "--n-select", "30", "--n-val", "30",
                                  "--n-test", "40", "--budgets", "30", "--splits", "2", "--menu", "table",
                                  "logistic", "--k-max", "2"])
    assert code == 0, err
    assert_terminal_safe(out, "sweep stdout")
    assert_terminal_safe(err, "sweep stderr")
    code, out, err = run(capsys, ["next-judge", "hp", "--store", hostile["store"], "--families", "one_coin_iso",
                                  "--k-max", "2", "--quiet"])
    assert code == 0, err
    assert_terminal_safe(out, "next-judge")
    assert "esc?]0;PWNED??[2J" in out


def test_errors_quoting_names_stay_one_safe_line(capsys, hostile):
    code, out, err = run(capsys, ["select", "hp", "--store", hostile["store"], "--judges",
                                  "zz\x1b]0;T\x07\nfcps: error: forged"])
    assert code == 2 and out == ""
    assert_terminal_safe(err, "error")
    assert err.startswith("fcps: error: ") and err.count("\n") == 1
    # a message listing the judge names raw (synth --use-judges): continuation lines indented
    code, out, err = run(capsys, ["synth", "--regime", "parity", "--from", hostile["panel"], "--use-judges",
                                  "nope", "--out", str(hostile["folder"] / "x.csv")])
    assert code == 2 and "no judge column 'nope'" in err
    assert_terminal_safe(err, "error listing names")


def test_usage_errors_are_guarded(capsys):
    """A usage error (argparse's, before any command runs) goes through the same guard."""
    with pytest.raises(SystemExit):
        main(["select", "p.csv", "--top", "x\x1b[2J\x07"])
    err = capsys.readouterr().err
    assert "fcps: error:" in err and not RAW.search(err.replace("\n", ""))


def test_exports_are_exact_into_a_pipe_and_safe_on_a_terminal(capsys, hostile, monkeypatch):
    code, out, err = run(capsys, ["export", "hp", "--format", "csv", "--store", hostile["store"]])
    assert code == 0, err
    # data is data: the bytes are the user's (the CR judge is left out: the store's CSV export
    # writes a field holding a lone CR unquoted, which no CSV reader can split back)
    assert ",".join(JUDGES[:3]) in out and '"' + FORGE + '"' in out
    monkeypatch.setattr(sys.stdout, "isatty", lambda: True, raising=False)
    code = main(["export", "hp", "--format", "csv", "--store", hostile["store"]])
    out = capsys.readouterr().out
    assert code == 0 and "esc?]0;PWNED??[2J" in out and "\x1b" not in out


# -- --workers (item 12) -----------------------------------------------------------------

def test_workers_are_capped_by_cores_and_splits(monkeypatch, capsys):
    monkeypatch.setattr(cli_args, "usable_cores", lambda: 2)
    ns = lambda **kw: SimpleNamespace(**{"quiet": False, **kw})      # noqa: E731
    assert cli_args.capped_workers(ns(workers=200), 30) == 2
    assert "--workers 200 lowered to 2" in capsys.readouterr().err
    assert cli_args.capped_workers(ns(workers=200, backend="dask"), 30) == 30    # a cluster's workers
    assert cli_args.capped_workers(ns(workers=8, backend="dask"), 3) == 3
    assert cli_args.capped_workers(ns(workers=2), 1) == 1
    assert cli_args.capped_workers(ns(workers=1), 30) == 1
    assert capsys.readouterr().err.count("lowered") == 3
    assert cli_args.capped_workers(ns(workers=9, quiet=True)) == 2 and capsys.readouterr().err == ""


def test_sweep_workers_200_runs_on_the_cores(monkeypatch, capsys, hostile):
    """End to end: what sweep hands to calibration_growth is at most the usable cores."""
    import fcps_core.paper.experiments as experiments
    seen = {}

    def fake_growth(panel, budgets, **kw):
        seen["workers"] = kw["workers"]
        raise experiments.SplitError("stop here")
    monkeypatch.setattr(experiments, "calibration_growth", fake_growth)
    code, out, err = run(capsys, ["sweep", "hp", "--store", hostile["store"], "--n-select", "30", "--n-val", "30",
                                  "--n-test", "40", "--budgets", "30", "--workers", "200"])
    assert code == 2 and seen["workers"] == min(cli_args.usable_cores(), 30)
    assert "--workers 200 lowered to" in err


def test_check_prints_safely_and_caps_its_workers(capsys, hostile, monkeypatch):
    """``check pool`` names every dropped judge in its table; its --workers goes through the
    same cap as sweep's."""
    monkeypatch.setattr(cli_args, "usable_cores", lambda: 2)
    monkeypatch.setenv("FCPS_STORE", hostile["store"])        # check reads stored panels from it
    code, out, err = run(capsys, ["check", "pool", "hp", "--splits", "2",
                                  "--n-select", "30", "--n-val", "30", "--n-test", "40", "--workers", "50"])
    assert code == 0, err
    assert_terminal_safe(out, "check stdout")
    assert_terminal_safe(err, "check stderr")
    assert "esc?]0;PWNED??[2J" in out and "--workers 50 lowered to 2" in err


def test_a_name_that_is_not_utf8_is_one_clear_line(tmp_path):
    """Bytes from a non-UTF-8 command line arrive as surrogates: the store cannot hold them;
    say so, not DuckDB's conversion text, and leave the store as it was."""
    import os
    import subprocess
    import sys
    from store_helpers import ROOT
    store = tmp_path / "s.duckdb"
    for argv in ([b"show", b"x\x9by"], [b"import", str(ROOT / "data" / "llmbar.csv").encode(), b"--name", b"ok\xff"]):
        proc = subprocess.run([sys.executable, "-m", "fcps_core", *argv, b"--store", os.fsencode(store)],
                              cwd=ROOT, capture_output=True, timeout=120)
        err = proc.stderr.decode()
        assert proc.returncode == 2 and err.count("\n") == 1, err
        assert "not valid UTF-8" in err and "Conversion Failure" not in err, err
