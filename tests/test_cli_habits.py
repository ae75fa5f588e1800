"""The command line's habits (issue 29, item 6), end to end through subprocesses.

* every option of every subcommand has help, and help shows the defaults;
* progress into a pipe is plain lines, never a carriage return (a terminal keeps its live line);
* ``-`` reads standard input (``select -``, ``score MODEL -``), bounded by the import limit
  and named ``<stdin>`` in errors;
* ``--json`` on every command, and errors under ``--json`` also as one JSON line on stdout
  (exit 2; stderr keeps its one ``fcps: error:`` line);
* files written in the format their extension (or ``--format``) names: Parquet and JSON Lines
  read back by pyarrow and json;
* CSV with LF line ends;
* ``run:N`` accepted by ``show``.
"""

from __future__ import annotations

import argparse
import json
import os
import pty
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
VENV_PYTHON = ROOT / ".venv" / "bin" / "python"
PYTHON = str(VENV_PYTHON) if VENV_PYTHON.exists() else sys.executable
#: a quick selection (the habits are not about the protocol)
QUICK = ("--protocol", "split", "--choice", "argmin", "--families", "table", "logistic", "--k-max", "3",
         "--estimate", "none", "--seed", "0")


def cli(*args: str, stdin: bytes | None = None, store: Path | None = None, stderr=subprocess.PIPE,
        timeout: int = 300) -> subprocess.CompletedProcess:
    """``python -m fcps_core ARGS`` from the project root with ``stdin`` piped in; a
    private store so no default store is created or seeded."""
    env = dict(os.environ)
    if store is not None:
        env["FCPS_STORE"] = str(store)
    return subprocess.run([PYTHON, "-m", "fcps_core", *args], cwd=ROOT, input=stdin if stdin is not None else b"",
                          stdout=subprocess.PIPE, stderr=stderr, timeout=timeout, env=env)


@pytest.fixture(scope="module")
def work(tmp_path_factory):
    """A small synthetic panel and a predictor selected on it (files in a module folder)."""
    d = tmp_path_factory.mktemp("habits")
    panel = d / "panel.csv"
    proc = cli("synth", "--regime", "mixed", "--rows", "400", "--judges", "4", "--seed", "1", "--out", str(panel))
    assert proc.returncode == 0, proc.stderr
    model = d / "model.json"
    proc = cli("select", str(panel), *QUICK, "--save-model", str(model), "--quiet", store=d / "s.duckdb")
    assert proc.returncode == 0, proc.stderr
    return {"dir": d, "panel": panel, "model": model, "store": d / "s.duckdb"}


# -- help -----------------------------------------------------------------------------------

def _subparsers():
    from fcps_core.cli import build_parser
    parser = build_parser()
    sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    return parser, sub.choices


def test_every_option_of_every_command_has_help():
    """Walk the parser: every argument (options and positionals) of the top level and of
    each of the 16 commands has non-empty help text."""
    parser, commands = _subparsers()
    assert len(commands) >= 16
    missing = [f"{name} {a.option_strings or a.dest}"
               for name, p in [("", parser), *commands.items()] for a in p._actions
               if not isinstance(a, argparse._SubParsersAction) and not (a.help or "").strip()]
    assert missing == []


def test_help_shows_defaults():
    """Each option with a meaningful default says it in its help line; 'default: None'
    never appears."""
    _, commands = _subparsers()
    for name, p in commands.items():
        formatter = p._get_formatter()
        text = p.format_help()
        assert "default: None" not in text, name
        for a in p._actions:
            if not a.option_strings or a.default in (None, False, [], argparse.SUPPRESS) \
                    or isinstance(a, argparse._HelpAction):
                continue
            assert "default" in formatter._get_help_string(a).lower(), f"{name} {a.option_strings}"
    folds = next(a for a in commands["select"]._actions if "--folds" in a.option_strings)
    assert "(default: 5)" in commands["select"]._get_formatter()._get_help_string(folds) % {"default": 5}


def test_every_command_takes_json():
    _, commands = _subparsers()
    without = [n for n, p in commands.items() if not any("--json" in a.option_strings for a in p._actions)]
    assert without == []


# -- progress ---------------------------------------------------------------------------------

def test_progress_into_a_pipe_has_no_carriage_return(work):
    """Piped stderr: plain progress lines ending in newlines, at most one per tenth."""
    proc = cli("select", str(work["panel"]), *QUICK)
    assert proc.returncode == 0, proc.stderr
    assert b"\r" not in proc.stderr
    lines = [line for line in proc.stderr.decode().splitlines() if line.startswith("[")]
    assert lines and lines[-1].endswith("] done") and 2 <= len(lines) <= 11


def test_progress_on_a_terminal_keeps_the_live_line(work):
    """A terminal on stderr: the status line is redrawn with carriage returns."""
    master, slave = pty.openpty()
    try:
        proc = subprocess.Popen([PYTHON, "-m", "fcps_core", "select", str(work["panel"]), *QUICK],
                                cwd=ROOT, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=slave)
        os.close(slave)
        chunks = []
        while True:
            try:
                data = os.read(master, 65536)
            except OSError:     # the child closed the terminal
                break
            if not data:
                break
            chunks.append(data)
        proc.communicate(timeout=300)
    finally:
        os.close(master)
    assert proc.returncode == 0
    assert b"\r[" in b"".join(chunks)


# -- standard input ---------------------------------------------------------------------------

def test_select_reads_standard_input(work):
    """``select -`` gives the result ``select FILE`` gives (the panel is called 'stdin')."""
    from_file = cli("select", str(work["panel"]), *QUICK, "--json", "--quiet")
    from_stdin = cli("select", "-", *QUICK, "--json", "--quiet", stdin=work["panel"].read_bytes())
    assert from_file.returncode == 0 and from_stdin.returncode == 0, from_stdin.stderr
    a, b = json.loads(from_file.stdout), json.loads(from_stdin.stdout)
    assert b["panel"]["name"] == "stdin"
    for d in (a, b):
        d.pop("panel"), d.pop("timings")
    assert a == b


def test_score_model_dash_reads_standard_input(work):
    """``score MODEL -`` scores what is piped in, as ``score MODEL FILE`` does."""
    from_file = cli("score", str(work["model"]), str(work["panel"]), "--quiet")
    from_stdin = cli("score", str(work["model"]), "-", "--quiet", stdin=work["panel"].read_bytes())
    assert from_stdin.returncode == 0, from_stdin.stderr
    assert from_stdin.stdout == from_file.stdout
    assert from_stdin.stdout.count(b"\n") == 401


def test_standard_input_formats_by_content(work, tmp_path):
    """Gzip-compressed and JSON Lines input are recognised by their content."""
    import gzip
    gz = cli("select", "-", *QUICK, "--json", "--quiet", stdin=gzip.compress(work["panel"].read_bytes()))
    assert gz.returncode == 0, gz.stderr
    jsonl = tmp_path / "p.jsonl"
    assert cli("synth", "--regime", "mixed", "--rows", "200", "--judges", "3", "--out", str(jsonl)).returncode == 0
    proc = cli("select", "-", *QUICK, "--json", "--quiet", stdin=jsonl.read_bytes())
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout)["panel"]["rows"] == 200


def test_standard_input_errors_name_stdin_and_respect_the_limit(tmp_path):
    """A bad cell is located in ``<stdin>`` (never the temporary path); input above
    ``--max-mb`` is refused once the limit is passed."""
    proc = cli("select", "-", stdin=b"item_id,label,j1\n1,1,A\n2,x,B\n")
    err = proc.stderr.decode()
    assert proc.returncode == 2 and proc.stdout == b""
    assert err.startswith("fcps: error: <stdin> line 3, column 'label'") and "fcps-stdin" not in err
    big = b"item_id,label,j1\n" + b"".join(b"%d,1,A\n" % i for i in range(400))
    proc = cli("import", "-", "--name", "x", "--max-mb", "0.001", "--store", str(tmp_path / "s.duckdb"), stdin=big)
    assert proc.returncode == 2
    assert proc.stdout == b""
    assert proc.stderr.decode().startswith("fcps: error: <stdin>: standard input is more than")


# -- JSON errors ------------------------------------------------------------------------------

def test_errors_under_json_are_one_json_line(tmp_path):
    """Under --json a bad input is also one JSON object on stdout (with the location) beside
    the usual one ``fcps: error:`` line on stderr; exit 2. A usage error too. Without
    --json stdout stays empty."""
    proc = cli("select", "-", "--json", stdin=b"item_id,label,j1\n1,1,A\n2,x,B\n")
    assert proc.returncode == 2
    lines = proc.stdout.decode().splitlines()
    assert len(lines) == 1
    err = json.loads(lines[0])
    assert set(err) == {"error", "type", "file", "line", "column", "hint", "exit"}
    assert (err["file"], err["line"], err["column"], err["exit"]) == ("<stdin>", 3, "label", 2)
    assert err["hint"] and "cannot be mapped" in err["error"]
    text = proc.stderr.decode().splitlines()
    assert len(text) == 1 and text[0] == "fcps: error: " + err["error"]
    usage = cli("select", "x.csv", "--folds", "many", "--json")
    assert usage.returncode == 2
    assert json.loads(usage.stdout.decode())["type"] == "usage"
    assert usage.stderr.decode().startswith("fcps: error: argument --folds")
    missing = cli("show", "nope", "--json", "--store", str(tmp_path / "s.duckdb"))
    assert missing.returncode == 2 and json.loads(missing.stdout.decode())["error"]
    plain = cli("select", "x.csv", "--folds", "many")
    assert plain.returncode == 2 and plain.stdout == b""
    assert plain.stderr.decode().startswith("fcps: error: argument --folds")


# -- output formats and line ends ---------------------------------------------------------------

def test_synth_writes_the_format_its_extension_names(tmp_path):
    import pyarrow.parquet as pq
    out = {ext: tmp_path / f"p.{ext}" for ext in ("csv", "parquet", "jsonl")}
    for path in out.values():
        proc = cli("synth", "--regime", "mixed", "--rows", "50", "--judges", "3", "--out", str(path))
        assert proc.returncode == 0, proc.stderr
    csv_bytes = out["csv"].read_bytes()
    assert b"\r" not in csv_bytes and csv_bytes.count(b"\n") == 51
    table = pq.read_table(out["parquet"])
    assert table.num_rows == 50 and "label" in table.column_names
    rows = [json.loads(line) for line in out["jsonl"].read_text().splitlines()]
    assert len(rows) == 50 and isinstance(rows[0]["label"], float)
    bad = cli("synth", "--regime", "mixed", "--rows", "50", "--out", str(tmp_path / "x.csv"), "--format", "parquet")
    assert bad.returncode == 2 and b"--format parquet" in bad.stderr and not (tmp_path / "x.csv").exists()


def test_score_writes_parquet_and_jsonl_and_lf_csv(work, tmp_path):
    """``score --out`` follows the extension; the CSV (file and stdout) has LF line ends."""
    import pyarrow.parquet as pq
    base = cli("score", str(work["model"]), str(work["panel"]), "--quiet")
    assert base.returncode == 0
    assert b"\r" not in base.stdout and base.stdout.startswith(b"item_id,prediction,N_z,in_support,missing_judges\n")
    for ext in ("parquet", "jsonl", "csv"):
        proc = cli("score", str(work["model"]), str(work["panel"]), "--out", str(tmp_path / f"p.{ext}"), "--quiet")
        assert proc.returncode == 0, proc.stderr
    table = pq.read_table(tmp_path / "p.parquet")
    assert table.num_rows == 400 and table.column_names[:2] == ["item_id", "prediction"]
    rows = [json.loads(line) for line in (tmp_path / "p.jsonl").read_text().splitlines()]
    assert len(rows) == 400 and 0 <= rows[0]["prediction"] <= 1
    assert (tmp_path / "p.csv").read_bytes() == base.stdout
    lines = base.stdout.decode().splitlines()[1:]
    assert [r["item_id"] for r in rows] == [line.split(",")[0] for line in lines]
    assert all(abs(r["prediction"] - float(line.split(",")[1])) <= 5e-7 for r, line in zip(rows, lines))


def test_lf_csv_keeps_line_breaks_inside_quoted_cells():
    from fcps_core.cli.formats import lf_csv
    assert lf_csv(b"a,b\r\n1,2\r\n") == b"a,b\n1,2\n"
    assert lf_csv(b'a,b\r\n"x\r\ny",2\r\n') == b'a,b\n"x\r\ny",2\n'


# -- run:N ----------------------------------------------------------------------------------------

def test_show_accepts_run_references(work, tmp_path):
    """``show run:N`` shows a stored run (text and JSON) as ``export run:N`` exports it."""
    store = tmp_path / "s.duckdb"
    proc = cli("select", str(work["panel"]), *QUICK, "--save", "--store", str(store), "--quiet")
    assert proc.returncode == 0, proc.stderr
    text = cli("show", "run:1", "--store", str(store))
    assert text.returncode == 0, text.stderr
    assert text.stdout.decode().startswith("run 1: select on panel 'panel', done")
    shown = json.loads(cli("show", "run:1", "--json", "--store", str(store)).stdout)
    # the answer sentence the selection printed, first after the header (when it has a frontier)
    from fcps_core.reports.explain import answer
    assert answer(shown["result"])
    assert text.stdout.decode().splitlines()[1] == "ANSWER  " + answer(shown["result"])
    exported = json.loads(cli("export", "run:1", "--format", "json", "--store", str(store)).stdout)
    assert shown == exported
    jsonl = tmp_path / "c.jsonl"
    assert cli("export", "run:1", "--out", str(jsonl), "--store", str(store)).returncode == 0
    assert len(jsonl.read_text().splitlines()) == len(shown["result"]["candidates"])
    gone = cli("show", "run:99", "--store", str(store))
    assert gone.returncode == 2 and b"no stored run with id 99" in gone.stderr


def test_the_text_report_names_an_average_as_the_deployed_average():
    """The optimistic held-out risk the text report prints beside the estimate is the
    deployed choice's own: for an average of several models it is the average's, and the
    line says so (it said "the winner's", the best member's word)."""
    from fcps_core import make_blocks, select
    from fcps_core.cli.render import render_result
    from fcps_core.paper.synthetic import make_regime
    panel = make_regime("mixed", rows=600, judges=5, seed=0)
    result = select(panel, make_blocks(panel, seed=0), seed=0)
    assert result.members and len(result.members) > 1
    line = next(l for l in render_result(result).splitlines() if l.startswith("  deployed risk"))
    assert "the deployed average's own" in line and "winner" not in line
    # walk 5 (350 x 24 continuous panel): "deployed risk (bbc, mse): 0.0080 [95% 0.0068, 0.0094]; the
    # deployed average's own cross-fitted risk 0.0080 is optimistic": the same printed number is not
    # called optimistic beside itself, nor one printed above it (the verdict's words)
    d = result.to_dict(cells_limit=12)
    for estimate, said in ((0.00802, "here the two agree to the digits shown"),
                           (0.0079, "here the estimate comes out lower"), (0.0081, "is optimistic")):
        changed = {**d, "deployed_risk": {**d["deployed_risk"], "estimate": estimate, "optimistic": 0.00798}}
        shown = type("Shown", (), {"to_dict": lambda self, cells_limit=None, changed=changed: changed,
                                   "selector": result.selector})()
        line = next(l for l in render_result(shown).splitlines() if l.startswith("  deployed risk"))
        assert line.endswith(said) and ("is optimistic" in line) == (said == "is optimistic"), line


def test_the_candidates_table_tells_apart_candidates_that_differ_only_in_parameters():
    """Walk 7: two backoff candidates on the same path and K with other shrinkages printed as
    two identical rows; the table now has a parameters column (the pages' words)."""
    from fcps_core import make_blocks, select
    from fcps_core.cli.render import render_result
    from fcps_core.paper.synthetic import make_regime
    panel = make_regime("mixed", rows=600, judges=5, seed=0)
    result = select(panel, make_blocks(panel, seed=0), seed=0)
    d = result.to_dict(cells_limit=12)
    best = min(d["candidates"], key=lambda c: (c["val_risk"], c["K"]))
    twins = [{**best, "family": "backoff", "params": {"shrinkage": s}, "val_risk": best["val_risk"] - 1e-9}
             for s in (2.0, 8.0)]
    changed = {**d, "candidates": twins + d["candidates"]}
    shown = type("Shown", (), {"to_dict": lambda self, cells_limit=None: changed, "selector": result.selector})()
    lines = render_result(shown).splitlines()
    top = lines.index(next(l for l in lines if l.startswith("top ")))
    assert "parameters" in lines[top + 1]
    rows = [l for l in lines[top + 3:top + 5]]
    assert "shrinkage=2.0" in rows[0] and "shrinkage=8.0" in rows[1], rows


def test_the_baselines_table_prints_a_small_mse_at_the_answers_decimals():
    """Walk 10 (a panel whose MSE is near 0.0002): the text report's baselines table printed
    a recipe's difference of two risks rounded to 4 decimals (+0.0001) beside its own 95 %
    interval [0.000002, 0.000039]. The table now prints at the answer's decimals, so each
    printed difference is the printed out-of-bag risk minus the selection's and lies in
    its interval."""
    import re
    from fcps_core import make_blocks, select
    from fcps_core.cli.render import render_result
    from fcps_core.paper.synthetic import make_regime
    panel = make_regime("mixed", rows=600, judges=5, seed=0)
    result = select(panel, make_blocks(panel, seed=0), seed=0)
    d = result.to_dict(cells_limit=12)
    chosen = next(p for p in d["frontier"] if p["chosen"])
    small = {**d, "deployed_risk": {**d["deployed_risk"], "estimate": 0.000195, "bbc_estimate": 0.000242,
                                    "ci": [0.000190, 0.000200], "optimistic": 0.000240},
             "frontier": [dict(p, ci=[0.000190, 0.000200], deployed_risk={"estimate": 0.000195,
                                                                          "ci": [0.000190, 0.000200]})
                          if p is chosen else p for p in d["frontier"]],
             "baselines": [dict(b, risk=0.000265, diff_vs_selected=0.0000218, ci=[0.000002, 0.000039])
                           for b in d["baselines"]]}
    shown = type("Shown", (), {"to_dict": lambda self, cells_limit=None: small, "selector": result.selector})()
    lines = render_result(shown).splitlines()
    head = next(i for i, l in enumerate(lines) if l.startswith("baselines ("))
    assert "the selection's out-of-bag risk 0.000242;" in lines[head]
    rows = [l for l in lines[head + 3:] if re.search(r"\[-?\d", l)][:len(small["baselines"])]
    assert rows
    for row in rows:
        heldout, oob, diff, lo, hi = re.findall(r"-?\d+\.\d+", row)[-5:]
        # 0.000242 + 0.0000218 = 0.0002638 -> 0.000264; 0.000264 - 0.000242 = 0.000022 (by hand)
        assert (heldout, oob, diff, lo, hi) == ("0.000265", "0.000264", "0.000022", "0.000002", "0.000039"), row
        assert float(lo) <= float(diff) <= float(hi)
