"""The command line, ``python -m fcps_core``.

* :mod:`.main` -- the parser and the one dispatch (every command sets ``handler``);
* :mod:`.args` -- shared argument building and parsing;
* :mod:`.engine_commands` -- select, sweep, synth, report;
* :mod:`.deploy_commands` -- score, audit;
* :mod:`.store_commands` -- import, panels, show, delete, export, runs, annotate, seed;
* :mod:`.plan_commands`, :mod:`.check_commands` -- next-judge, check;
* :mod:`.store_hooks` -- stored panel names as inputs and ``--save``;
* :mod:`.context` -- what one invocation learns as it runs (:class:`RunContext`);
* :mod:`.render` -- terminal and JSON output (the one output sanitiser, JSON errors);
* :mod:`.progress` -- progress: a live line on a terminal, plain lines on a pipe;
* :mod:`.stdin` -- ``-`` as standard input (a bounded temporary copy, shown as ``<stdin>``);
* :mod:`.formats` -- output formats from the extension or ``--format`` (CSV, Parquet, JSON Lines).
"""

from .main import build_parser, main

__all__ = ["build_parser", "main"]
