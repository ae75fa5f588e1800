"""The command line, ``python -m fcps_core``.

* :mod:`.main` -- the parser and the one dispatch (every command sets ``handler``);
* :mod:`.args` -- shared argument building and parsing;
* :mod:`.engine_commands` -- select, sweep, synth, report, score;
* :mod:`.store_commands` -- import, panels, show, delete, export, runs, seed;
* :mod:`.store_hooks` -- stored panel names as inputs and ``--save``;
* :mod:`.context` -- what one invocation learns as it runs (:class:`RunContext`);
* :mod:`.render` -- terminal and JSON output.
"""

from .main import build_parser, main

__all__ = ["build_parser", "main"]
