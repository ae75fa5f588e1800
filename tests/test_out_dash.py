"""``--out -`` means standard output where a command writes there by default (score, export,
label-next), and is refused elsewhere; it never makes a file named ``-`` in the working
directory (it did: a second run then failed with "it already exists")."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

TESTS = Path(__file__).resolve().parent
if str(TESTS) not in sys.path:
    sys.path.insert(0, str(TESTS))

from bad_inputs import make_base  # noqa: E402


@pytest.fixture(scope="module")
def base(tmp_path_factory):
    return make_base(tmp_path_factory.mktemp("dash") / "base")


def _main(capsys, *argv):
    from fcps_core.cli.main import main
    code = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


@pytest.mark.parametrize("command", ["score", "export"])
def test_out_dash_writes_standard_output(base, tmp_path, monkeypatch, capsys, command):
    monkeypatch.chdir(tmp_path)
    argv = (["score", base / "model.json", base / "traffic.csv"] if command == "score"
            else ["export", "earlier", "--store", base / "store.duckdb"])
    for _ in range(2):                  # the same command twice: nothing left behind to refuse
        code, out, err = _main(capsys, *argv, "--out", "-")
        assert code == 0, err
        assert out.splitlines()[0].startswith("item_id,")
        assert len(out.splitlines()) == 61
    assert not (tmp_path / "-").exists()


def test_save_model_dash_is_refused_before_the_selection(base, tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    code, out, err = _main(capsys, "select", base / "good.csv", "--families", "table", "--save-model", "-")
    assert code == 2 and err.count("\n") == 1 and "--save-model '-'" in err and "file name" in err
    assert not (tmp_path / "-").exists()
