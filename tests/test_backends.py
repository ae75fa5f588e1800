"""The sweep's parallel backend is configurable: the same sweep on a Dask cluster.

``calibration_growth(..., workers=N, backend=B)`` runs splits through joblib with backend
B. Here a dask.distributed LocalCluster (two in-process workers, no network beyond the
loopback) stands in for a real cluster; joblib's ``dask`` backend sends each split to it.
Records must be identical to the sequential run (each split's seed is fixed up front, so
neither the backend nor the scheduling order can change a number).
"""

from __future__ import annotations

import dask.distributed as distributed
import pytest

from fcps_core.paper.experiments import calibration_growth
from fcps_core.paper.synthetic import make_regime

KW = dict(n_select=120, n_val=120, n_test=160, splits=3, seed=7,
          families=["table", "backoff", "logistic", "ds_jury"])
BUDGETS = [40, 120]


@pytest.fixture(scope="module")
def panel():
    return make_regime("mixed", rows=900, judges=4, seed=4, tie_rate=0.1, group_size=2,
                       unlabelled_share=0.1)


def test_dask_cluster_gives_identical_records(panel):
    sequential = calibration_growth(panel, BUDGETS, workers=1, **KW)
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=False,
                                  dashboard_address=None) as cluster, \
            distributed.Client(cluster) as client:
        with distributed.get_task_stream(client) as stream:
            on_dask = calibration_growth(panel, BUDGETS, workers=2, backend="dask", **KW)
        # The splits really ran as tasks on the cluster's workers.
        assert len(client.scheduler_info()["workers"]) == 2
        assert any("_run_split" in str(t["key"]) for t in stream.data)
    assert on_dask.records == sequential.records
    assert on_dask.cells == sequential.cells


def test_joblib_parallel_config_selects_dask(panel):
    """The user can also pick the backend with joblib's own ``parallel_config``."""
    from joblib import parallel_config
    from joblib.parallel import get_active_backend
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=False,
                                  dashboard_address=None) as cluster, distributed.Client(cluster):
        with parallel_config(backend="dask"):
            assert type(get_active_backend()[0]).__name__ == "DaskDistributedBackend"
        res = calibration_growth(panel, BUDGETS[:1], workers=2, backend="dask", **KW)
    assert res.records == calibration_growth(panel, BUDGETS[:1], workers=1, **KW).records


def test_loky_processes_give_identical_records(panel):
    two = calibration_growth(panel, BUDGETS, workers=2, backend="loky", **KW)
    assert two.records == calibration_growth(panel, BUDGETS, workers=1, **KW).records
