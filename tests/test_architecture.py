"""The package shows its layers: no import cycle inside ``fcps_core``, no private name
imported across modules, pure figures, an engine that never imports a front end (walks the
import statements of every module). Modules are split by topic, not by a line count."""

import ast
from pathlib import Path

PKG = Path(__file__).resolve().parent.parent / "fcps_core"


def _module_name(path: Path) -> str:
    rel = path.relative_to(PKG.parent).with_suffix("")
    parts = list(rel.parts)
    if parts[-1] == "__init__":
        parts = parts[:-1]
    return ".".join(parts)


def _resolve(module: str, is_pkg: bool, node: ast.ImportFrom) -> str:
    if node.level == 0:
        return node.module or ""
    base = module.split(".") if is_pkg else module.split(".")[:-1]
    base = base[: len(base) - (node.level - 1)]
    return ".".join(base + ([node.module] if node.module else []))


def import_graph() -> tuple[dict[str, set[str]], list[tuple[str, str, str]]]:
    modules = {_module_name(p): p for p in PKG.rglob("*.py")}
    graph: dict[str, set[str]] = {m: set() for m in modules}
    private = []
    for mod, path in modules.items():
        is_pkg = path.name == "__init__.py"
        for node in ast.walk(ast.parse(path.read_text())):
            targets = []
            if isinstance(node, ast.ImportFrom):
                src = _resolve(mod, is_pkg, node)
                for alias in node.names:
                    sub = f"{src}.{alias.name}"
                    if sub in modules:
                        targets.append(sub)
                    elif src in modules:
                        targets.append(src)
                        if alias.name.startswith("_") and not alias.name.startswith("__"):
                            private.append((mod, src, alias.name))
            elif isinstance(node, ast.Import):
                targets = [a.name for a in node.names if a.name in modules]
            for t in targets:
                if t != mod and t.startswith("fcps_core"):
                    graph[mod].add(t)
    return graph, private


def _cycles(graph):
    index, low, stack, on, out, counter = {}, {}, [], set(), [], [0]

    def visit(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in graph[v]:
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(sorted(comp))
    for v in graph:
        if v not in index:
            visit(v)
    return out


def test_no_import_cycle_inside_the_package():
    graph, _ = import_graph()
    assert _cycles(graph) == []


def test_no_private_name_imported_across_modules():
    _, private = import_graph()
    assert private == []


def _external_imports(path: Path) -> set[str]:
    """Top-level names of the absolute imports of one file (inside functions too)."""
    names = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            names.update(a.name.split(".")[0] for a in node.names)
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names.add(node.module.split(".")[0])
    return names


def test_figures_are_pure():
    """A figure builder turns plain data (dicts, lists) into a Plotly figure: it reads no store
    or file, runs no selection and knows no front end (constants of the engine are fine), so the CLI's HTML export, the dashboard and the
    reproduction report draw the same figure from the same stored JSON."""
    graph, _ = import_graph()
    impure = ("store", "selection", "cli", "ingest", "deploy", "planning", "reproduction", "run_report")
    for mod, targets in graph.items():
        if mod.startswith("fcps_core.figures"):
            assert not [t for t in targets if t.split(".")[1] in impure], (mod, targets)
    for path in (PKG / "figures").glob("*.py"):
        assert not _external_imports(path) & {"streamlit", "duckdb", "sklearn", "fcps_app"}, path.name


def test_the_engine_never_imports_a_front_end():
    """Layers point one way: the dashboard (fcps_app, app_pages, Streamlit) calls the engine,
    never the reverse."""
    for path in PKG.rglob("*.py"):
        assert not _external_imports(path) & {"streamlit", "fcps_app", "app_pages"}, path


def test_pages_hold_only_pages():
    pages = PKG.parent / "app_pages"
    for path in pages.glob("*.py"):
        text = path.read_text()
        assert "from app_pages" not in text and "import app_pages" not in text, path.name
