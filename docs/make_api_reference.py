"""Write docs/api.md, the API reference, from the public objects' signatures and docstrings.

    PYTHONPATH=. .venv/bin/python docs/make_api_reference.py          # rewrite docs/api.md
    PYTHONPATH=. .venv/bin/python docs/make_api_reference.py --check  # exit 1 if it is stale

The public API is what ``fcps_core.__all__`` names plus the modules listed in ``MODULES``
(the store, the audit, the synthetic regimes, the sweep, the scikit-learn estimators). Only
names without a leading underscore are documented; a class lists its public methods and
properties. ``tests/test_api_reference.py`` runs ``--check``, so the page follows the code.
"""

from __future__ import annotations

import argparse
import importlib
import inspect
import sys
from pathlib import Path

OUT = Path(__file__).resolve().parent / "api.md"

#: (module, names or None for the module's ``__all__``), in the order of the page
MODULES = [
    ("fcps_core", None),
    ("fcps_core.store", ["Store"]),
    ("fcps_core.deploy.audit", ["audit_traffic", "AuditResult"]),
    ("fcps_core.paper.synthetic", ["make_regime", "semi_real", "REGIMES"]),
    ("fcps_core.paper.experiments", ["calibration_growth", "SweepResult"]),
    ("fcps_core.sklearn", None),
]

SKIP = {"__version__"}


def _signature(obj) -> str:
    try:
        return str(inspect.signature(obj))
    except (TypeError, ValueError):
        return "(...)"


def _doc(obj) -> str:
    return inspect.cleandoc(inspect.getdoc(obj) or "(no docstring)")


def _members(cls) -> list[tuple[str, object]]:
    out = []
    for name, member in vars(cls).items():
        if name.startswith("_"):
            continue
        if isinstance(member, (staticmethod, classmethod)):
            member = member.__func__
        if inspect.isfunction(member) or isinstance(member, property):
            out.append((name, member))
    return sorted(out)


def _object(qualname: str, obj) -> list[str]:
    if inspect.isclass(obj):
        lines = [f"### class `{qualname}{_signature(obj)}`", "", _doc(obj), ""]
        for name, member in _members(obj):
            if isinstance(member, property):
                lines += [f"- **`{name}`** (property): {_first_paragraph(member)}"]
            else:
                lines += [f"- **`{name}{_signature(member)}`**: {_first_paragraph(member)}"]
        return lines + [""]
    if callable(obj):
        return [f"### `{qualname}{_signature(obj)}`", "", _doc(obj), ""]
    return [f"### `{qualname}`", "", f"A constant: `{obj!r}`"[:300], ""]


def _first_paragraph(obj) -> str:
    return " ".join(_doc(obj).split("\n\n", 1)[0].split())


def build() -> str:
    lines = ["# API reference", "",
             "Generated from the docstrings by `docs/make_api_reference.py`; do not edit by hand.",
             "The JSON the library writes is described in [json-contract.md](json-contract.md).", ""]
    for module_name, names in MODULES:
        try:
            module = importlib.import_module(module_name)
        except ModuleNotFoundError as exc:
            if exc.name == module_name:
                continue            # a module not written yet is left out, not faked
            raise
        names = names if names is not None else list(getattr(module, "__all__", []))
        lines += [f"## `{module_name}`", "", _first_paragraph(module), ""]
        for name in names:
            if name in SKIP or name.startswith("_"):
                continue
            lines += _object(f"{module_name}.{name}", getattr(module, name))
    return "\n".join(lines).rstrip() + "\n"


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="exit 1 if docs/api.md differs from the code")
    args = parser.parse_args(argv)
    text = build()
    if args.check:
        if not OUT.exists() or OUT.read_text() != text:
            sys.stderr.write("docs/api.md is stale: run PYTHONPATH=. python docs/make_api_reference.py\n")
            return 1
        return 0
    OUT.write_text(text)
    print(f"wrote {OUT} ({len(text.splitlines())} lines)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
