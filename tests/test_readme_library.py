"""The README's library examples run as written (from the project root)."""

import os
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def test_readme_library_examples_run(tmp_path, monkeypatch, capsys):
    section = (ROOT / "README.md").read_text().split("## Library", 1)[1].split("\n## ", 1)[0]
    blocks = re.findall(r"```python\n(.*?)```", section, re.S)
    assert len(blocks) >= 2
    monkeypatch.chdir(tmp_path)
    os.symlink(ROOT / "data", tmp_path / "data")
    for code in blocks:
        exec(compile(code, "README.md", "exec"), {})
    out = capsys.readouterr().out
    assert "'estimate'" in out and (tmp_path / "model.json").exists()
