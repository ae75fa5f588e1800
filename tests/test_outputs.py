"""Output files: never over something the user did not name, never half-written."""

import errno
import os
import subprocess
import sys

import pytest

from fcps_core.files.safe_write import OutputError, atomic_output, check_output_path, write_output
from store_helpers import ROOT, assert_one_line_error, csv_text, good_rows, write


def test_new_file_is_written_and_an_existing_one_needs_force(tmp_path):
    target = tmp_path / "out.txt"
    write_output(target, "first")
    assert target.read_text() == "first"
    with pytest.raises(OutputError, match="already exists; pass --force"):
        write_output(target, "second")
    assert target.read_text() == "first"
    write_output(target, "second", force=True)
    assert target.read_text() == "second"
    assert [p.name for p in tmp_path.iterdir()] == ["out.txt"]          # no temporary left


@pytest.mark.parametrize("kind", ["symlink", "directory", "device", "fifo", "store", "no_dir"])
def test_what_is_never_written_even_with_force(tmp_path, kind):
    victim = tmp_path / "victim.txt"
    victim.write_text("precious")
    if kind == "symlink":
        path = tmp_path / "link.txt"
        path.symlink_to(victim)
    elif kind == "directory":
        path = tmp_path / "adir"
        path.mkdir()
    elif kind == "device":
        path = "/dev/null"
    elif kind == "fifo":
        path = tmp_path / "pipe"
        os.mkfifo(path)
    elif kind == "store":
        path = tmp_path / "fcps.duckdb"
    else:
        path = tmp_path / "missing" / "out.txt"
    with pytest.raises(OutputError, match="cannot use"):
        write_output(path, "x", force=True)
    assert victim.read_text() == "precious"


def test_a_failed_write_leaves_the_old_file_and_no_temporary(tmp_path, monkeypatch):
    target = tmp_path / "out.txt"
    target.write_text("old")

    def full_disk(fd):
        raise OSError(errno.ENOSPC, "No space left on device")
    monkeypatch.setattr(os, "fsync", full_disk)
    with pytest.raises(OutputError, match="^no space left on device writing .*out.txt; the old file is kept"):
        write_output(target, "new", force=True)
    assert target.read_text() == "old"
    assert [p.name for p in tmp_path.iterdir()] == ["out.txt"]


def test_an_error_inside_the_block_keeps_the_target(tmp_path):
    target = tmp_path / "out.txt"
    with pytest.raises(RuntimeError):
        with atomic_output(target) as fh:
            fh.write("half")
            raise RuntimeError("interrupted")
    assert not target.exists() and list(tmp_path.iterdir()) == []


def test_check_output_path_accepts_a_new_file(tmp_path):
    assert check_output_path(tmp_path / "new.json") == tmp_path / "new.json"


def _cli(*args, cwd=ROOT):
    proc = subprocess.run([sys.executable, "-m", "fcps_core", *args], cwd=cwd, capture_output=True, text=True,
                          timeout=600, env={**os.environ, "FCPS_STORE": "/nonexistent/store.duckdb"})
    return proc.returncode, proc.stdout, proc.stderr


def test_cli_outputs_refuse_existing_files_and_accept_force(tmp_path):
    panel = write(tmp_path / "p.csv", csv_text(good_rows(120, seed=1)))
    model = tmp_path / "m.json"
    model.write_text("keep me")
    base = ["select", str(panel), "--protocol", "split", "--choice", "argmin", "--families", "logistic",
            "--quiet", "--save-model", str(model)]
    line = assert_one_line_error(_cli(*base))
    assert "already exists; pass --force" in line and model.read_text() == "keep me"
    assert _cli(*base, "--force")[0] == 0 and model.read_text().startswith("{")
    out = tmp_path / "pred.csv"
    out.write_text("keep")
    line = assert_one_line_error(_cli("score", str(model), str(panel), "--out", str(out)))
    assert "already exists" in line and out.read_text() == "keep"
    assert _cli("score", str(model), str(panel), "--out", str(out), "--force")[0] == 0
    assert out.read_text().startswith("item_id,prediction")
    synth = tmp_path / "s.csv"
    synth.write_text("keep")
    line = assert_one_line_error(_cli("synth", "--regime", "parity", "--rows", "50", "--out", str(synth)))
    assert "already exists" in line and synth.read_text() == "keep"
    line = assert_one_line_error(_cli("synth", "--regime", "parity", "--rows", "50", "--out", "/dev/null",
                                      "--force"))
    assert "not a regular file" in line
