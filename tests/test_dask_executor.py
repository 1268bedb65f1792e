"""A sweep through a real Dask LocalCluster gives the same records as in-process, written by the client."""

import pytest

from implicitbias.executors import open_executor
from implicitbias.validation.run import KIND
from implicitbias.validation.sweep import load_spec, run_sweep

SPEC = {
    "name": "dask",
    "base": {"dataset": "synthetic", "data_size": 100, "width": 0.0625, "epochs": 1, "batch_size": 32,
             "precision": "float64", "sigma_w": [0.5, 2.0], "optimizer": ["sgd", "adam"], "lr": 0.01},
    "options": {"threads": 1},
}


# slow (16 s): a Dask LocalCluster's workers are started in the default tier by tests/test_orphans.py
@pytest.mark.slow
def test_dask_local_cluster_matches_inline(tmp_path):
    from implicitbias.store import Store

    spec = load_spec(SPEC)
    with Store(tmp_path / "dask.sqlite") as store, open_executor("dask", workers=2) as executor:
        distributed = run_sweep(spec, store, executor=executor, progress=False)
        assert store.counts(KIND) == {"done": 4}
    with Store(tmp_path / "inline.sqlite") as store:
        inline = run_sweep(spec, store, progress=False)
    for a, b in zip(distributed, inline):
        assert [r["epoch"] for r in a["history"]] == [r["epoch"] for r in b["history"]]
        for ra, rb in zip(a["history"], b["history"]):
            for key in ("train_loss", "val_loss", "test_acc", "kernel_norm"):
                assert ra[key] == pytest.approx(rb[key], rel=1e-9)


def _square(config):
    return {"value": config["x"] ** 2}


def test_running_scheduler_by_address(tmp_path):
    """``--address`` reaches an existing scheduler (through the short connect timeout) and computes."""
    from distributed import LocalCluster

    from implicitbias.store import Store

    with LocalCluster(n_workers=1, threads_per_worker=1, processes=False, dashboard_address=None) as cluster:
        with Store(tmp_path / "s.sqlite") as store, open_executor("dask", address=cluster.scheduler_address) as ex:
            recs = store.map("sq", _square, [{"x": i} for i in range(3)], executor=ex, progress=False)
    assert [r["value"] for r in recs] == [0, 1, 4]


@pytest.mark.parametrize("address", ["foo", "xyz://a:b"])
def test_bad_or_unreachable_address_is_one_parameter_error(address):
    from implicitbias.theory.params import ParameterError

    with pytest.raises(ParameterError, match="cannot reach a Dask scheduler") as info:
        with open_executor("dask", address=address):
            pass
    assert "\n" not in str(info.value)
