"""Deployment: what happens after selection. Traffic audits against the calibration
support (``audit``), per-row support of scored items (``support``), and the predictor
compiled to one SQL statement (``sql``)."""
