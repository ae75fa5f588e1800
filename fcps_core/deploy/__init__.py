"""Deployment: the predictor file, scoring, traffic audits and the SQL export.

What happens after selection. Traffic audits against the calibration
support (``audit``), per-row support of scored items (``support``), and the predictor
compiled to one SQL statement (``sql``). ``score``'s fast paths: traffic files read with only
the predictor's columns built (``traffic``) and the predictions file built by Arrow
(``writer``), each exactly what the general reader and writer give."""
