"""The front ends (the command line ``fcps_core/cli/``, the dashboard ``app.py``,
``app_pages/`` and ``fcps_app/``) reach the engine only through the service layer
``fcps_core/service/``: an import scan (imports inside functions count) lists every
front-end import of any other ``fcps_core`` module and fails on one not in
:data:`REMAINING`, an explicit allow-list that only shrinks."""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

#: what a front end may import from fcps_core (top-level module or package under fcps_core)
ALLOWED = {"service", "errors", "glossary", "figures", "defaults", "version"}

#: front-end imports of engine modules still to move behind the service: (file, module)
#: pairs, one per distinct import; remove a pair when its import goes
REMAINING: set[tuple[str, str]] = set()


def front_end_files() -> list[Path]:
    files = [ROOT / "app.py"]
    for folder in ("fcps_core/cli", "fcps_app", "app_pages"):
        files += sorted((ROOT / folder).glob("*.py"))
    return files


def _lazy_names() -> dict[str, str]:
    """``from fcps_core import X``: the module X is loaded from (fcps_core/__init__._LAZY)."""
    tree = ast.parse((ROOT / "fcps_core" / "__init__.py").read_text())
    for node in ast.walk(tree):
        if isinstance(node, ast.AnnAssign) and getattr(node.target, "id", None) == "_LAZY" \
                or isinstance(node, ast.Assign) and any(getattr(t, "id", None) == "_LAZY" for t in node.targets):
            table = ast.literal_eval(node.value)
            return {name: "fcps_core" + module for name, (module, _attr) in table.items()}
    return {}


def _is_module(dotted: str) -> bool:
    path = ROOT.joinpath(*dotted.split("."))
    return path.with_suffix(".py").exists() or (path / "__init__.py").exists()


def imported_modules(path: Path, source: str | None = None) -> list[str]:
    """Every fcps_core module ``path`` imports (dotted, absolute), at any depth of the file
    (``source``: the file's text, read from ``path`` when not given)."""
    rel = path.relative_to(ROOT).with_suffix("")
    package = list(rel.parts[:-1])
    lazy = _lazy_names()
    out = []
    for node in ast.walk(ast.parse(path.read_text() if source is None else source)):
        if isinstance(node, ast.Import):
            out += [a.name for a in node.names if a.name.split(".")[0] == "fcps_core"]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = ".".join(package[:len(package) - node.level + 1] + ([node.module] if node.module else []))
            else:
                base = node.module or ""
            if base.split(".")[0] != "fcps_core":
                continue
            for alias in node.names:
                sub = f"{base}.{alias.name}"
                if _is_module(sub):
                    out.append(sub)
                elif base == "fcps_core" and alias.name in lazy:
                    out.append(lazy[alias.name])
                else:
                    out.append(base)
    return out


def engine_imports() -> set[tuple[str, str]]:
    """(front-end file, engine module) for every import the layer rule forbids."""
    found = set()
    for path in front_end_files():
        own = "cli" if path.parent.name == "cli" else None
        for module in imported_modules(path):
            parts = module.split(".")
            top = parts[1] if len(parts) > 1 else "fcps_core"
            if top in ALLOWED or top == own:
                continue
            if module == "fcps_core":        # the package's own names: errors and the version
                continue
            found.add((str(path.relative_to(ROOT)), module))
    return found


def test_scan_sees_imports_inside_functions_and_relative_ones():
    """The scan itself: a relative import inside a function, a lazy root name and a
    submodule named in ``from package import module`` are each found."""
    source = ("def f():\n    from ..store import Store\n    from .. import checks\n"
              "from fcps_core import make_blocks, FCPSError\nfrom fcps_core.service import select\n")
    found = imported_modules(ROOT / "fcps_core" / "cli" / "probe.py", source)
    assert sorted(found) == ["fcps_core", "fcps_core.paper.robustness_checks", "fcps_core.service.select", "fcps_core.data.splits",
                             "fcps_core.store"]


def test_front_ends_reach_the_engine_only_through_the_service():
    found = engine_imports()
    new = sorted(found - REMAINING)
    assert not new, ("front ends import engine modules directly (call a workflow of fcps_core.service "
                     "instead): " + "; ".join(f"{f} -> {m}" for f, m in new))


def test_allow_list_only_shrinks():
    """A pair left in REMAINING after its import went must be removed, so the list is the
    exact set of imports still to move."""
    stale = sorted(REMAINING - engine_imports())
    assert not stale, "no longer imported, remove from REMAINING: " + "; ".join(f"{f} -> {m}" for f, m in stale)


if __name__ == "__main__":      # the count, for a progress report: python tests/test_service_layer.py
    pairs = sorted(engine_imports())
    for f, m in pairs:
        print(f"{f} -> {m}")
    print(f"{len(pairs)} front-end import(s) of engine modules ({len(REMAINING)} allowed)")
