"""The paper's split protocol pinned for tests that are not about the protocol.

The library's default is the cross-fitted protocol (folds x repeats fits per selection);
tests of everything else (families, diagnostics, store, plots) pin the paper's S/M/V
protocol with the validation argmin, which is fast and reproduces the paper's numbers.
"""

from functools import partial

import fcps_core
from fcps_core.selection import PAPER_PROTOCOL
from fcps_core.selection import FCPSSelector as _FCPSSelector

select = partial(fcps_core.select, **PAPER_PROTOCOL)


def FCPSSelector(**options):
    return _FCPSSelector(**{**PAPER_PROTOCOL, **options})
