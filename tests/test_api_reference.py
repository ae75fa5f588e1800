"""docs/api.md is the API reference generated from the docstrings: it must match the code."""

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def test_api_reference_is_current():
    proc = subprocess.run([sys.executable, "docs/make_api_reference.py", "--check"], cwd=ROOT,
                          capture_output=True, text=True, env={"PYTHONPATH": str(ROOT), "PATH": ""})
    assert proc.returncode == 0, proc.stderr


def test_api_reference_documents_the_public_entry_points():
    text = (ROOT / "docs" / "api.md").read_text()
    for name in ("fcps_core.read_panel", "fcps_core.select", "fcps_core.FCPSPredictor",
                 "fcps_core.store.Store", "fcps_core.deploy.audit.audit_traffic"):
        assert f"`{name}(" in text or f"class `{name}(" in text, name
