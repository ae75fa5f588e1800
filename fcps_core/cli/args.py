"""Argument building and parsing shared by every command: panel-file flags, lists, ranges,
block counts, and the parser that turns usage errors into one ``fcps: error:`` line."""

from __future__ import annotations

import argparse
import math
import os
import re
import sys

from ..errors import FCPSError
from ..service.parsers import parse_budgets, parse_names, parse_range  # noqa: F401 (the commands' names)
from ..service.reports import count_of
from .render import log

#: seeds are 64-bit unsigned in numpy's generators; the CLI accepts 0 .. 2**63 - 1
MAX_SEED = 2 ** 63 - 1


def add_panel_arguments(p: argparse.ArgumentParser) -> None:
    g = p.add_argument_group("panel file")
    g.add_argument("panel", help="panel file (wide or long CSV/TSV/Parquet/JSONL, optionally .gz), '-' for "
                                 "standard input (format from the content), or a stored panel name")
    g.add_argument("--layout", choices=["auto", "wide", "long"], default="auto",
                   help="wide: one column per judge; long: one row per (item, judge) output; auto: detected")
    g.add_argument("--item-column", default="item_id", help="the item id column")
    g.add_argument("--group-column", default="group_id",
                   help="the group column (rows of a group stay in one block or fold; absent: one group per item)")
    g.add_argument("--label-column", default="label", help="the human label column (empty cell: unlabelled)")
    g.add_argument("--block-column", default="block",
                   help="column with S/M/V/T to use the user's own blocks exactly (default: 'block' when present)")
    g.add_argument("--judge-column", default="judge", help="long layout: the judge column")
    g.add_argument("--output-column", default="output", help="long layout: the output column")
    g.add_argument("--labels", dest="labels_path", help="long layout: separate labels file (item id, label); "
                                                         "'-' for standard input")
    g.add_argument("--judges", nargs="+", help="judge columns to use (default: all other columns)")
    g.add_argument("--schema", choices=["pairwise", "binary", "rubric", "continuous", "categorical"],
                   help="override the detected output schema for every judge")
    g.add_argument("--label-range", help="LO,HI of the labels' scale (rubric scores, or continuous scores such as "
                                         "error counts), mapped to [0,1]; a negative LO works as --label-range -25,0")
    g.add_argument("--judge-range", help="LO,HI of rubric judge scores (default: observed range)")
    g.add_argument("--delimiter", help="field delimiter of a CSV/TSV file (default , or tab; another "
                                       "one is used, and said, when it alone splits the header)")
    g.add_argument("--decimal", choices=[",", "."],
                   help="decimal mark of judge outputs and labels: ',' (0,85) or '.' (default: detected; "
                        "decimal commas are read as numbers in a file not delimited by commas)")
    g.add_argument("--collapse-ties", action="store_true",
                   help="merge tie and parse_error into one neutral cell value")


#: options whose value is a LO,HI range that may start with a minus sign
RANGE_OPTIONS = ("--label-range", "--judge-range")


def joined_range_values(argv: list[str]) -> list[str]:
    """``argv`` with a range option and a following value that starts with a minus sign
    (``--label-range -25,0``) joined into one ``--label-range=-25,0`` token: argparse reads
    only plain negative numbers as values, so "-25,0" would otherwise be taken for an option
    and the option refused as having no argument."""
    out, i = [], 0
    while i < len(argv):
        token = argv[i]
        if token in RANGE_OPTIONS and i + 1 < len(argv) and re.match(r"^-\s*[\d.]", argv[i + 1]):
            out.append(f"{token}={argv[i + 1]}")
            i += 2
            continue
        out.append(token)
        i += 1
    return out


def add_block_arguments(g, *, seed_default: int | None = 0, seed_help: str | None = None) -> None:
    """The blocks a selection draws: a ratio or counts, the T share, the seed."""
    g.add_argument("--split", help="S:M:V or S:M:V:T ratio (default 1:2:1)")
    g.add_argument("--test-share", type=float, default=0.0, help="share of labelled rows for T")
    g.add_argument("--n-select", type=int, help="n_S, rows of the selection block S (with --n-cal and --n-val, "
                                                "instead of --split)")
    g.add_argument("--n-cal", type=int, help="n_M, rows of the calibration block M")
    g.add_argument("--n-val", type=int, help="n_V, rows of the validation block V")
    g.add_argument("--n-test", type=int, default=0, help="n_T, rows of the research test block T (never "
                                                         "used to choose)")
    g.add_argument("--seed", type=int, default=seed_default,
                   help=seed_help or "seed of the blocks, folds, random path and bootstrap")


class DefaultsHelpFormatter(argparse.HelpFormatter):
    """Help that shows each option's default: " (default: X)" is added to an option's help
    when it has a meaningful default (not None, not an off switch, not an empty list) and
    its help does not already say what the default is."""

    def _get_help_string(self, action) -> str:
        text = action.help or ""
        default = action.default
        if (not action.option_strings or "%(default)" in text or "default" in text.lower()
                or default is None or default is False or default is argparse.SUPPRESS
                or default == [] or isinstance(action, (argparse._HelpAction, argparse._VersionAction))):
            return text
        return f"{text} (default: %(default)s)" if text else "default: %(default)s"


def program_name() -> str:
    """How the user called the CLI: ``fcps`` (the console script) or ``python -m fcps_core``,
    for usage lines and hints."""
    return "fcps" if os.path.basename(sys.argv[0] or "") == "fcps" else "python -m fcps_core"


class OneLineParser(argparse.ArgumentParser):
    """Usage errors as one ``fcps: error:`` line on stderr (exit 2), like every other bad
    input; when the command line holds ``--json``, also as one line of JSON on stdout
    (render.error_json). Help shows every option's default (:class:`DefaultsHelpFormatter`)."""

    #: set by cli.main for one command line that holds --json
    json_errors = False

    def __init__(self, *args, **kwargs):
        kwargs.setdefault("formatter_class", DefaultsHelpFormatter)
        super().__init__(*args, **kwargs)

    def error(self, message: str):
        hint = f"see {program_name()} {self._subcommand()}--help"
        if OneLineParser.json_errors:
            from .render import error_json
            sys.stdout.write(error_json(message, kind="usage", hint=hint))
            sys.stdout.flush()
        self.exit(2, f"fcps: error: {message} ({hint})\n")

    def _subcommand(self) -> str:
        name = self.prog[len(program_name()):].strip() if self.prog.startswith(program_name()) else ""
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


#: the largest --max-mb (1 TB): beyond it the limit means nothing and the byte count overflows
MAX_MB = 1_000_000.0
#: integer flags: (attribute, lowest, highest or None). The upper bounds of the selector's
#: flags are its own (``FCPSSelector.validate``: memory stays bounded); a flag a command
#: does not have is skipped.
INT_FLAGS = (("seed", 0, MAX_SEED), ("n_bins", 1, None), ("splits", 1, None), ("workers", 1, None),
             ("k_max", 1, None), ("folds", 2, 100), ("repeats", 1, 100), ("n_boot", 10, 100_000),
             ("max_members", 1, 1_000), ("table_k_max", 1, None), ("pairwise_k_max", 1, None),
             ("rows", 1, None), ("judges", 1, None), ("n_select", 1, None), ("n_cal", 1, None),
             ("n_val", 1, None), ("n_test", 0, None), ("max_rows", 1, None), ("max_judges", 1, None),
             ("max_distinct", 1, None), ("parity_order", 1, None), ("group_size", 1, None),
             ("top", 0, None))
#: float flags: (attribute, lowest, highest, what the message asks for); None: any finite number
FLOAT_FLAGS = (("alpha", 0.0, None, "a finite number >= 0"),
               ("test_share", 0.0, 1.0, "a share from 0 up to (not including) 1"),
               ("tie_rate", 0.0, 1.0, "a share from 0 to 1"),
               ("max_mb", 0.0, MAX_MB, f"a positive number of megabytes up to {MAX_MB:,.0f}"),
               ("gain_threshold", None, None, "a finite number"),
               ("pressure_threshold", None, None, "a finite number"),
               ("gamma", None, None, "a finite number"),
               ("budget", 0.0, None, "a finite cost per item >= 0"))
#: list flags that must name something when given (``--families ''`` is not "every family")
LIST_FLAGS = (("judges", "judge column"), ("families", "family"), ("paths", "path rule"),
              ("menu", "family"))


def _flag(attr: str) -> str:
    return "--" + attr.replace("_", "-")


def check_numbers(args) -> None:
    """Reject impossible flag values with one line naming the flag, before any work starts."""
    for attr, low, high in INT_FLAGS:
        v = getattr(args, attr, None)
        if not isinstance(v, int) or isinstance(v, bool):
            continue
        if v < low:
            raise FCPSError(f"{_flag(attr)} must be at least {low} (got {v})")
        if high is not None and v > high:
            what = f"an integer from {low} to {high}" if attr != "seed" else f"at most {high}"
            raise FCPSError(f"{_flag(attr)} must be {what} (got {v})")
    for attr, low, high, what in FLOAT_FLAGS:
        v = getattr(args, attr, None)
        if not isinstance(v, float):
            continue
        if not math.isfinite(v):
            raise FCPSError(f"{_flag(attr)} must be a finite number (got {v})")
        bad = (low is not None and v < low) or (high is not None and v > high) \
            or (attr == "test_share" and v >= 1) or (attr == "max_mb" and v <= 0)
        if bad:
            raise FCPSError(f"{_flag(attr)} must be {what} (got {v:g})")
    for attr, what in LIST_FLAGS:
        v = getattr(args, attr, None)
        if isinstance(v, list) and not parse_names(v):
            if attr == "judges" and isinstance(getattr(args, "panel", None), str):
                raise FCPSError(f"{args.panel}: --judges names no judge column: give at least one column "
                                "name, or leave --judges out to use every column other than "
                                "item/group/label/block")
            raise FCPSError(f"{_flag(attr)} names no {what}: give at least one, or leave "
                            f"{_flag(attr)} out for the default")
    delimiter = getattr(args, "delimiter", None)
    if delimiter is not None:
        if len(delimiter) != 1:
            raise FCPSError(f"--delimiter must be exactly one character (got {delimiter!r}); "
                            "for tabs pass a literal tab or use a .tsv file")
        if delimiter == '"' or (not delimiter.isprintable() and delimiter != "\t"):
            raise FCPSError(f"--delimiter {delimiter!r} cannot separate fields (a quote, a line break or "
                            "another control character); give the character between the fields, "
                            "e.g. --delimiter ';'")
    if getattr(args, "split", None) is not None:
        from ..service.parsers import parse_ratio
        parse_ratio(args.split, name="--split")
    for attr in ("label_range", "judge_range"):
        if getattr(args, attr, None) is not None:
            parse_range(getattr(args, attr), _flag(attr))
    budgets = getattr(args, "budgets", None)
    if isinstance(budgets, str):
        parse_budgets(budgets)


def usable_cores() -> int:
    """The CPUs this process may run on (its affinity mask, else the machine's count)."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except (AttributeError, OSError):
        return os.cpu_count() or 1


def capped_workers(args, tasks: int | None = None) -> int:
    """``--workers`` bounded by the parallel tasks (splits) and, for the local backends, by the
    usable cores: every loky worker is a process with its own copy of the panel, so
    ``--workers 200`` would start 200 processes for 30 splits on 2 cores (the memory and time
    that cost are in docs/performance.md). A dask cluster's workers are not on this machine:
    there only the task count bounds it (``tasks`` None: not known, only the cores bound it).
    Says so on stderr when it lowers the number (silent with --quiet)."""
    workers, cores = args.workers, usable_cores()
    local = getattr(args, "backend", "loky") != "dask"
    bounds = ([cores] if local else []) + ([tasks] if tasks is not None else [])
    limit = max(min(bounds), 1) if bounds else workers
    if workers <= limit:
        return workers
    why = " and ".join(([f"{count_of(cores, 'usable core')}"] if local else [])
                       + ([f"{count_of(tasks, 'split')}"] if tasks is not None else []))
    log(args, f"--workers {workers} lowered to {limit}: more would only add processes ({why})")
    return limit


