"""What one command invocation learns as it runs (instead of attributes on the argparse
namespace): when it started and which stored panel it ran on (for ``--save``)."""

from __future__ import annotations

import datetime as _dt
from dataclasses import dataclass, field


def _now() -> _dt.datetime:
    return _dt.datetime.now(_dt.timezone.utc).replace(tzinfo=None)


@dataclass
class RunContext:
    started: _dt.datetime = field(default_factory=_now)
    store_panel: str | None = None     # the stored panel the command read or stored
    panel_version: str | None = None   # its version then: --save refuses if it was replaced since

    def seconds(self) -> float:
        return (_now() - self.started).total_seconds()
