"""The paper's reproduction report: every reproducible table and figure label.

``python -m fcps_core report --out docs/reproduction.md``
regenerates every reproducible table and figure label of the paper (one section per
label, a label -> section map at the top, figures in ``figures/`` beside the file).

Modules: ``common`` (plan, labels, markdown, figure writer), ``runs`` (the sweeps, run
once), ``real_tables`` / ``real_more`` (real-panel tables), ``controlled`` (controlled
regimes), ``external`` (external binary stand-ins), ``check_sections`` (the seven
``check`` commands), ``figure_sections`` (the figures), ``build`` (assembly).
"""

from .build import FIGURE_FILES, build_report, label_map, write_report
from .common import DATA, NAVIGATION, OFFLINE, PAPER_LABELS, REAL_POOLS, md_table

__all__ = ["DATA", "FIGURE_FILES", "NAVIGATION", "OFFLINE", "PAPER_LABELS", "REAL_POOLS", "build_report",
           "label_map", "md_table", "write_report"]
