"""Argument building and parsing shared by every command: panel-file flags, lists, ranges,
block counts, and the parser that turns usage errors into one ``fcps: error:`` line."""

from __future__ import annotations

import argparse
import math
from typing import Sequence

from ..errors import FCPSError

#: seeds are 64-bit unsigned in numpy's generators; the CLI accepts 0 .. 2**63 - 1
MAX_SEED = 2 ** 63 - 1


def parse_names(values: Sequence[str] | None) -> list[str] | None:
    """Accept ``--families a b`` and ``--families a,b``."""
    if values is None:
        return None
    out = []
    for v in values:
        out += [x.strip() for x in v.split(",") if x.strip()]
    return out


def parse_range(text: str | None) -> tuple[float, float] | None:
    if text is None:
        return None
    try:
        lo, hi = (float(x) for x in text.split(","))
    except ValueError:
        raise FCPSError(f"range {text!r} must be LO,HI (e.g. 1,5)") from None
    if not (math.isfinite(lo) and math.isfinite(hi) and hi > lo):
        raise FCPSError(f"range {text!r} must be two finite numbers LO,HI with LO < HI (e.g. 1,5)")
    return lo, hi


def add_panel_arguments(p: argparse.ArgumentParser) -> None:
    g = p.add_argument_group("panel file")
    g.add_argument("panel", help="panel file (wide or long CSV/TSV/Parquet/JSONL, optionally .gz) or a stored panel name")
    g.add_argument("--layout", choices=["auto", "wide", "long"], default="auto")
    g.add_argument("--item-column", default="item_id")
    g.add_argument("--group-column", default="group_id")
    g.add_argument("--label-column", default="label")
    g.add_argument("--block-column", default="block",
                   help="column with S/M/V/T to use the user's own blocks exactly (default: 'block' when present)")
    g.add_argument("--judge-column", default="judge", help="long layout: the judge column")
    g.add_argument("--output-column", default="output", help="long layout: the output column")
    g.add_argument("--labels", dest="labels_path", help="long layout: separate labels file (item id, label)")
    g.add_argument("--judges", nargs="+", help="judge columns to use (default: all other columns)")
    g.add_argument("--schema", choices=["pairwise", "binary", "rubric", "continuous", "categorical"],
                   help="override the detected output schema for every judge")
    g.add_argument("--label-range", help="LO,HI of integer rubric labels (normalised to [0,1])")
    g.add_argument("--judge-range", help="LO,HI of rubric judge scores (default: observed range)")
    g.add_argument("--collapse-ties", action="store_true",
                   help="merge tie and parse_error into one neutral cell value")


class OneLineParser(argparse.ArgumentParser):
    """Usage errors as one ``fcps: error:`` line (exit 2), like every other bad input."""

    def error(self, message: str):
        self.exit(2, f"fcps: error: {message} (see python -m fcps_core {self._subcommand()}--help)\n")

    def _subcommand(self) -> str:
        name = self.prog.split("fcps_core", 1)[-1].strip()
        return f"{name} " if name else ""


def block_counts(args) -> dict | None:
    given = [args.n_select, args.n_cal, args.n_val]
    if all(v is None for v in given):
        if args.n_test:
            raise FCPSError("--n-test needs --n-select, --n-cal and --n-val as well")
        return None
    if any(v is None for v in given):
        raise FCPSError("give all of --n-select, --n-cal and --n-val (or use --split)")
    if args.split:
        raise FCPSError("use either --split or the --n-* counts, not both")
    return {"n_S": args.n_select, "n_M": args.n_cal, "n_V": args.n_val, "n_T": args.n_test or 0}


def check_numbers(args) -> None:
    """Reject impossible numeric flags with one line before any work starts."""
    import math as _m
    for flag, low in (("seed", 0), ("n_bins", 1), ("splits", 1), ("workers", 1), ("k_max", 1),
                      ("folds", 2), ("repeats", 1), ("n_boot", 10), ("max_members", 1),
                      ("table_k_max", 1), ("pairwise_k_max", 1), ("rows", 1), ("judges", 1)):
        v = getattr(args, flag, None)
        if isinstance(v, (int, float)) and not isinstance(v, bool) and v < low:
            raise FCPSError(f"--{flag.replace('_', '-')} must be at least {low} (got {v})")
    for flag in ("alpha", "gain_threshold", "pressure_threshold", "test_share", "gamma", "max_mb"):
        v = getattr(args, flag, None)
        if isinstance(v, float) and not _m.isfinite(v):
            raise FCPSError(f"--{flag.replace('_', '-')} must be a finite number (got {v})")
    seed = getattr(args, "seed", None)
    if isinstance(seed, int) and seed > MAX_SEED:
        raise FCPSError(f"--seed must be at most {MAX_SEED} (got {seed})")
    delimiter = getattr(args, "delimiter", None)
    if delimiter is not None and len(delimiter) != 1:
        raise FCPSError(f"--delimiter must be exactly one character (got {delimiter!r}); "
                        "for tabs pass a literal tab or use a .tsv file")
