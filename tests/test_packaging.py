"""The distribution: pyproject declares every package the code imports, the console script
points at the CLI, the version has one source, a licence ships, and the server binds loopback."""

from __future__ import annotations

import ast
import importlib
import re
import sys
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PYPROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text())

# import name -> distribution name where they differ
DIST_OF = {"sklearn": "scikit-learn", "dask": "dask"}
STDLIB = set(sys.stdlib_module_names)


def _requirement_name(req: str) -> str:
    return re.split(r"[<>=!~\[ ;]", req, maxsplit=1)[0].strip().lower()


def _imports(folder: Path) -> set[str]:
    """Top-level names of every import in ``folder`` (inside functions too)."""
    names = set()
    for path in folder.rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if isinstance(node, ast.Import):
                names.update(a.name.split(".")[0] for a in node.names)
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                names.add(node.module.split(".")[0])
    return names - STDLIB - {"fcps_core", "fcps_app", "__future__"}


def test_every_imported_package_is_declared():
    project = PYPROJECT["project"]
    core = {_requirement_name(r) for r in project["dependencies"]}
    extras = {_requirement_name(r) for reqs in project["optional-dependencies"].values() for r in reqs}
    undeclared_core = {n for n in _imports(ROOT / "fcps_core")
                       if DIST_OF.get(n, n).lower() not in core | extras}
    assert not undeclared_core, f"fcps_core imports undeclared packages: {sorted(undeclared_core)}"
    undeclared_app = {n for n in _imports(ROOT / "fcps_app")
                      if DIST_OF.get(n, n).lower() not in core | extras}
    assert not undeclared_app, f"fcps_app imports undeclared packages: {sorted(undeclared_app)}"
    # The dashboard's packages are an extra, not a dependency of the library.
    assert {"streamlit", "plotly"} <= {_requirement_name(r) for r in project["optional-dependencies"]["app"]}
    assert not {"streamlit", "plotly", "pytest", "playwright", "hypothesis"} & core


def test_requirements_pin_what_pyproject_declares():
    """``make run``/``make test`` install requirements.txt: it must cover the library's
    dependencies and every extra, so a working checkout is a working package."""
    reqs = {_requirement_name(line) for line in (ROOT / "requirements.txt").read_text().splitlines()
            if line.strip() and not line.lstrip().startswith("#")}
    project = PYPROJECT["project"]
    declared = {_requirement_name(r) for r in project["dependencies"]}
    declared |= {_requirement_name(r) for reqs_ in project["optional-dependencies"].values()
                 for r in reqs_ if not r.startswith("fcps[")}
    assert declared <= reqs, f"in pyproject but not in requirements.txt: {sorted(declared - reqs)}"


def test_console_script_and_single_version():
    target = PYPROJECT["project"]["scripts"]["fcps"]
    module, func = target.split(":")
    assert callable(getattr(importlib.import_module(module), func))
    assert PYPROJECT["project"]["dynamic"] == ["version"]
    assert PYPROJECT["tool"]["setuptools"]["dynamic"]["version"]["attr"] == "fcps_core.version.__version__"
    assert "version" not in PYPROJECT["project"]


def test_licence_is_permissive_and_shipped():
    text = (ROOT / "LICENSE").read_text()
    assert text.startswith("MIT License") and "WITHOUT WARRANTY" in text
    assert PYPROJECT["project"]["license"] == {"file": "LICENSE"}


def test_server_binds_loopback_by_default():
    config = tomllib.loads((ROOT / ".streamlit" / "config.toml").read_text())
    assert config["server"]["address"] == "127.0.0.1"
    makefile = (ROOT / "Makefile").read_text()
    assert re.search(r"^ADDRESS \?= 127\.0\.0\.1$", makefile, re.M)
    run_rule = makefile.split("\nrun:", 1)[1].split("\n\n", 1)[0]
    assert "--server.address $(ADDRESS)" in run_rule


def test_the_console_script_calls_itself_fcps():
    """Installed as ``fcps``, usage lines and hints say ``fcps``; run as a module, they say
    ``python -m fcps_core``."""
    import subprocess
    code = ("import sys; sys.argv[0] = {name!r}; from fcps_core.cli import main; "
            "sys.exit(main(['select', '--no-such-option']))")
    for name, prog in (("/usr/local/bin/fcps", "fcps"), ("fcps_core/__main__.py", "python -m fcps_core")):
        proc = subprocess.run([sys.executable, "-c", code.format(name=name)], cwd=ROOT, capture_output=True,
                              text=True, timeout=120)
        assert proc.returncode == 2
        assert proc.stderr.strip().endswith(f"(see {prog} select --help)"), proc.stderr
