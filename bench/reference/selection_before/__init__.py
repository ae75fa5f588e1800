"""The default (cross-fitted) protocol's selection code as it stood at commit 78ada3b, before
the rows-scaling issue (issue 25) rewrote it on integer group codes and per-group sums.

Nothing in the engine imports this. ``tests/test_rows_scaling.py`` runs
``crossfit.fit_crossfit`` from here and from :mod:`fcps_core.selection.crossfit` on the same
selector, panel and blocks and checks that the choices agree and every risk, SE, interval
and estimate agrees to 1e-9 relative. The modules are verbatim copies of
``fcps_core/selection/{crossfit,honesty,choice,folds}.py`` at 78ada3b with their package
imports made absolute (``fcps_core.X``); the modules the issue did not touch (result,
baselines, views, selector) are imported from the engine.
"""
