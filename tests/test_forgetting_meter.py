"""ForgettingMeter (validation/meter.py) in a training loop written here, against independent routes:
the clock calculator (``theory.clocks.forgetting_clocks``) on the same schedule, torch's own
schedulers, the package's engine (``validation.run.execute``) on the same run, and the run format
read back (``validation.runs_format``)."""

import math

import pytest
import torch
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from torch import nn

import implicitbias as ib
from implicitbias.theory.clocks import CLOCKS, forgetting_clocks, steps_per_epoch
from implicitbias.theory.params import ParameterError
from implicitbias.theory.schedules import schedule
from implicitbias.validation.meter import ForgettingMeter

N, B, EPOCHS = 40, 16, 3  # 3 steps per epoch, the last one short


def _net(seed=0):
    torch.manual_seed(seed)
    return nn.Sequential(nn.Linear(5, 8, bias=False), nn.BatchNorm1d(8), nn.ReLU(), nn.Linear(8, 3))


def _data(seed=0):
    g = torch.Generator().manual_seed(seed)
    return torch.randn(N, 5, generator=g), torch.randint(0, 3, (N,), generator=g)


def _metrics(model, x, y):
    with torch.no_grad():
        model.eval()
        z = model(x)
        model.train()
    loss = nn.functional.cross_entropy(z, y).item()
    acc = (z.argmax(1) == y).double().mean().item()
    return dict(train_acc=acc, val_loss=loss, val_acc=acc, test_acc=acc, train_loss=loss)


def _train(model, opt, meter, *, epochs=EPOCHS, set_lr=None, scheduler=None, per_epoch_scheduler=None, initial=True):
    """A plain loop: minibatches of B, optional hand-written schedule ``set_lr(k)`` (rate of step k
    for every group, times the group's factor), torch schedulers stepped per step or per epoch."""
    x, y = _data()
    factors = [g["lr"] for g in opt.param_groups]
    k = 0
    if initial:
        meter.epoch_end(**_metrics(model, x, y))  # epoch 0: the initialisation
    for _ in range(epochs):
        for i in range(0, N, B):
            if set_lr is not None:
                for g, f in zip(opt.param_groups, factors):
                    g["lr"] = set_lr(k) * f
            loss = nn.functional.cross_entropy(model(x[i:i + B]), y[i:i + B])
            opt.zero_grad()
            loss.backward()
            opt.step()
            if scheduler is not None:
                scheduler.step()
            k += 1
        if per_epoch_scheduler is not None:
            per_epoch_scheduler.step()
        meter.epoch_end(**_metrics(model, x, y))
    return k


SPE = steps_per_epoch(N, B)
SCHEDULES = {
    "constant": schedule("constant", 0.1, SPE * EPOCHS),
    "cosine": schedule("cosine", 0.1, SPE * EPOCHS, eta_min=0.001),
    "step": schedule("step", 0.1, SPE * EPOCHS, milestones=(0.4, 0.8), gamma=0.3),
    "warmup": schedule("warmup", 0.1, SPE * EPOCHS, warmup=0.3, after="cosine"),
    "onecycle": schedule("onecycle", 0.1, SPE * EPOCHS),
}


@pytest.mark.parametrize("name", list(SCHEDULES))
@pytest.mark.parametrize("optimizer, make", [("sgd", lambda p: torch.optim.SGD(p, lr=1.0, weight_decay=0.01)),
                                             ("sgd_momentum", lambda p: torch.optim.SGD(p, lr=1.0, momentum=0.9)),
                                             ("adamw", lambda p: torch.optim.AdamW(p, lr=1.0, weight_decay=0.05))])
def test_clocks_equal_the_calculator_for_the_same_schedule(name, optimizer, make):
    model = _net()
    opt = make(model.parameters())
    meter = ForgettingMeter(model, opt, batch_size=B, n_train=N, sigma_w=1.0, seed=0)
    _train(model, opt, meter, set_lr=SCHEDULES[name])
    decay = opt.param_groups[0]["weight_decay"]
    expected = forgetting_clocks(optimizer, SCHEDULES[name], B, N, EPOCHS, decay)
    got = meter.clocks()
    assert got.optimizer == optimizer and got.governing == expected.governing
    assert got.cumulative == expected.cumulative  # exactly: the same rates summed the same way
    record = meter.record()
    assert [r["clocks"] for r in record["history"][1:]] == [
        {c: expected.cumulative[c][e] for c in CLOCKS} for e in range(EPOCHS)]
    assert record["history"][0]["clocks"] == dict.fromkeys(CLOCKS, 0.0)
    assert record["summary"]["clocks"] == expected.total and record["summary"]["steps_per_epoch"] == SPE


def test_torch_schedulers_are_recorded():
    """torch's CosineAnnealingLR (stepped per step) and MultiStepLR (per epoch) against the
    calculator's closed forms (torch updates recursively: equal to rounding)."""
    model = _net()
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    cosine = torch.optim.lr_scheduler.CosineAnnealingLR(opt, T_max=SPE * EPOCHS)
    meter = ForgettingMeter(model, opt, batch_size=B, n_train=N, sigma_w=0.5, seed=1)
    _train(model, opt, meter, scheduler=cosine)
    expected = forgetting_clocks("sgd", schedule("cosine", 0.1, SPE * EPOCHS), B, N, EPOCHS)
    for c in CLOCKS:
        assert meter.clocks().cumulative[c] == pytest.approx(expected.cumulative[c], rel=1e-12)

    model = _net()
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    steps = torch.optim.lr_scheduler.MultiStepLR(opt, milestones=[1, 2], gamma=0.5)
    meter = ForgettingMeter(model, opt, batch_size=B, n_train=N, sigma_w=0.5, seed=1)
    _train(model, opt, meter, per_epoch_scheduler=steps)
    by_hand = [0.1, 0.05, 0.025]  # the rate of each epoch
    expected = forgetting_clocks("sgd", lambda k: by_hand[k // SPE], B, N, EPOCHS)
    for c in CLOCKS:
        assert meter.clocks().cumulative[c] == pytest.approx(expected.cumulative[c], rel=1e-14)


def test_several_param_groups_each_with_its_clocks():
    model = _net()
    kernel, rest = model[0].weight, [p for n, p in model.named_parameters() if n != "0.weight"]
    opt = torch.optim.SGD([{"params": [kernel], "lr": 0.2, "weight_decay": 1e-3},
                           {"params": rest, "lr": 0.02, "weight_decay": 0.0}], lr=0.1)
    meter = ForgettingMeter(model, opt, batch_size=B, n_train=N, sigma_w=2.0, seed=3)
    _train(model, opt, meter, set_lr=SCHEDULES["warmup"])
    assert meter.scale_invariant == ["0"] and meter.clock_group == 0  # the BatchNorm-preceded kernel's group
    for g, (factor, decay) in enumerate([(0.2, 1e-3), (0.02, 0.0)]):
        expected = forgetting_clocks("sgd", lambda k: SCHEDULES["warmup"](k) * factor, B, N, EPOCHS, decay)
        assert meter.clocks(g).cumulative == expected.cumulative
    record = meter.record()
    assert record["summary"]["clocks_by_group"] == [meter.clocks(0).total, meter.clocks(1).total]
    assert record["summary"]["governing_clock"] == "T_L2" and record["summary"]["clocks"] == meter.clocks(0).total
    two_groups = torch.optim.SGD([{"params": [kernel]}, {"params": rest}], lr=0.1)
    other = ForgettingMeter(model, two_groups, batch_size=B, n_train=N, sigma_w=1.0, seed=0, clock_group=1,
                            scale_invariant=[])
    assert other.clock_group == 1 and other.scale_invariant == []
    head_group = ForgettingMeter(model, two_groups, batch_size=B, n_train=N, sigma_w=1.0, seed=0, scale_invariant=["3"])
    assert head_group.clock_group == 1  # the group of the kernel declared scale-invariant
    neither = ForgettingMeter(model, two_groups, batch_size=B, n_train=N, sigma_w=1.0, seed=0, scale_invariant=[])
    assert neither.clock_group == 0  # no scale-invariant kernel: the group with most kernel entries (40 vs 24)


def test_optimizer_names_and_their_clock():
    model = _net()
    for opt, name in ((torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9, nesterov=True), "nesterov"),
                      (torch.optim.Adam(model.parameters(), lr=0.1), "adam"),
                      (torch.optim.AdamW(model.parameters(), lr=0.1), "adamw"),
                      (torch.optim.RMSprop(model.parameters(), lr=0.1), "rmsprop")):
        assert ForgettingMeter(model, opt, batch_size=B, n_train=N, sigma_w=1.0, seed=0).optimizer_name == name
    adagrad = torch.optim.Adagrad(model.parameters(), lr=0.1)
    with pytest.raises(ParameterError, match="optimizer_name must be given for a Adagrad"):
        ForgettingMeter(model, adagrad, batch_size=B, n_train=N, sigma_w=1.0, seed=0)
    assert ForgettingMeter(model, adagrad, batch_size=B, n_train=N, sigma_w=1.0, seed=0,
                           optimizer_name="adam").optimizer_name == "adam"


def test_a_changing_weight_decay_and_an_empty_epoch_are_refused():
    model = _net()
    opt = torch.optim.SGD(model.parameters(), lr=0.1, weight_decay=0.1)
    meter = ForgettingMeter(model, opt, batch_size=B, n_train=N, sigma_w=1.0, seed=0)
    _train(model, opt, meter, epochs=1)
    with pytest.raises(ParameterError, match="epoch_end must follow at least one optimizer step"):
        meter.epoch_end(train_acc=0.5, val_loss=1.0, val_acc=0.5, test_acc=0.5)
    opt.param_groups[0]["weight_decay"] = 0.2
    _train(model, opt, meter, epochs=1, initial=False)
    with pytest.raises(ParameterError, match="weight_decay of param group 0 must stay constant"):
        meter.record()


def test_nan_loss_makes_the_run_diverged():
    model = _net()
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    meter = ForgettingMeter(model, opt, batch_size=B, n_train=N, sigma_w=1.0, seed=0)
    _train(model, opt, meter, epochs=2)
    x, y = _data()
    nn.functional.cross_entropy(model(x), y).backward()
    opt.step()
    meter.epoch_end(train_acc=0.5, val_loss=math.nan, val_acc=0.5, test_acc=0.5)
    record = meter.record()
    assert record["status"] == "diverged" and record["summary"]["diverged_epoch"] == 3


def test_bad_arguments_are_one_parameter_error():
    model = _net()
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    good = dict(batch_size=B, n_train=N, sigma_w=1.0, seed=0)
    for bad in ({"batch_size": 0}, {"batch_size": N + 1}, {"n_train": "many"}, {"sigma_w": -1.0},
                {"sigma_w": math.nan}, {"seed": -1}, {"scale_invariant": ["nope"]}, {"scale_invariant": "0"},
                {"clock_group": 3}, {"optimizer_name": "lamb"}, {"run_id": ""}, {"num_classes": 1}):
        with pytest.raises(ParameterError):
            ForgettingMeter(model, opt, **{**good, **bad})
    for args in ((None, opt), (model, None), (nn.ReLU(), opt)):
        with pytest.raises(ParameterError):
            ForgettingMeter(*args, **good)
    meter = ForgettingMeter(model, opt, **good)
    with pytest.raises(ParameterError, match="train_acc must be a fraction"):
        meter.epoch_end(train_acc=99.0, val_loss=1.0, val_acc=0.5, test_acc=0.5)
    with pytest.raises(ParameterError, match="before a record exists"):
        meter.record()


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.sampled_from(["train_acc", "val_loss", "val_acc", "test_acc", "train_loss"]),
       st.one_of(st.none(), st.text(max_size=3), st.booleans(), st.lists(st.floats(), max_size=2),
                 st.floats(min_value=1.5, max_value=1e3)))
def test_bad_metrics_are_refused(name, value):
    meter = ForgettingMeter(_net(), torch.optim.SGD(_net().parameters(), lr=0.1), batch_size=B, n_train=N,
                            sigma_w=1.0, seed=0)
    good = dict(train_acc=0.5, val_loss=1.0, val_acc=0.5, test_acc=0.5)
    if name in ("val_loss", "train_loss") and isinstance(value, float) or (name == "train_loss" and value is None):
        meter.epoch_end(**{**good, name: value})  # any loss is a number (a big one is the run's business)
        return
    with pytest.raises(ParameterError):
        meter.epoch_end(**{**good, name: value})


def test_the_meter_records_what_the_package_engine_records():
    """The same run (resnet9 on digits, width 1/8, constant lr) trained by ``execute`` and by a plain
    loop with the meter: clocks exactly, norms and metrics to rounding."""
    from implicitbias.validation.data import batches
    from implicitbias.validation.run import build, canonical_config, dataset_for, execute
    from implicitbias.validation.trainers import _optimizer

    c = canonical_config({"arch": "resnet9", "width": 0.125, "epochs": 2, "batch_size": 128, "train_size": 300,
                          "val_size": 100, "test_size": 100, "lr": 0.05, "sigma_w": 0.7, "seed": 4})
    engine = execute(c, options={"device": "cpu", "threads": 1})
    data = dataset_for(c)
    torch.set_num_threads(1)
    model = build(c, data, torch.device("cpu"), torch.float32)
    opt = _optimizer(c, list(model.named_parameters()), frozenset())  # no decay: nothing is placed
    meter = ForgettingMeter(model, opt, batch_size=c["batch_size"], n_train=len(data.y_train), sigma_w=c["sigma_w"],
                            seed=c["seed"])

    def evaluate(x, y):
        model.eval()
        with torch.no_grad():
            z = model(x)
        return nn.functional.cross_entropy(z, y).item(), (z.argmax(1) == y).double().mean().item()

    m = len(data.y_val)
    train = evaluate(data.x_train[:m], data.y_train[:m])
    val, test = evaluate(data.x_val, data.y_val), evaluate(data.x_test, data.y_test)
    meter.epoch_end(train_loss=train[0], train_acc=train[1], val_loss=val[0], val_acc=val[1], test_loss=test[0],
                    test_acc=test[1])
    gen = torch.Generator().manual_seed(c["seed"])
    n = len(data.y_train)
    for _ in range(c["epochs"]):
        model.train()
        loss_sum, correct = 0.0, 0
        for xb, yb in batches(data.x_train, data.y_train, c["batch_size"], gen):
            z = model(xb)
            loss = nn.functional.cross_entropy(z, yb)
            opt.zero_grad()
            loss.backward()
            opt.step()
            loss_sum += loss.item() * len(yb)
            correct += (z.argmax(1) == yb).sum().item()
        val, test = evaluate(data.x_val, data.y_val), evaluate(data.x_test, data.y_test)
        meter.epoch_end(train_loss=loss_sum / n, train_acc=correct / n, val_loss=val[0], val_acc=val[1],
                        test_loss=test[0], test_acc=test[1])
    mine = meter.record()
    assert mine["status"] == engine["status"] == "done"
    assert len(mine["history"]) == len(engine["history"]) == c["epochs"] + 1
    for a, b in zip(mine["history"], engine["history"]):
        assert a["clocks"] == b["clocks"]  # exactly
        assert a.keys() | {"seconds"} == b.keys()
        for key in ("train_loss", "train_acc", "val_loss", "val_acc", "test_loss", "test_acc", "kernel_norm"):
            assert a[key] == pytest.approx(b[key], rel=1e-5, abs=1e-6), (a["epoch"], key)
        assert a["kernel_norms"] == pytest.approx(b["kernel_norms"], rel=1e-5)
    for key in ("clocks", "governing_clock", "steps_per_epoch", "n_train", "tau_interp", "selected_epoch",
                "diverged_epoch"):
        assert mine["summary"][key] == engine["summary"][key], key
    for key in ("selected_test_acc", "final_test_acc", "initial_kernel_norm", "final_kernel_norm"):
        assert mine["summary"][key] == pytest.approx(engine["summary"][key], rel=1e-5)


@pytest.mark.parametrize("suffix", [".csv", ".jsonl", ".parquet"])
def test_rows_read_back_as_the_same_record(tmp_path, suffix):
    """``meter.rows()`` written with pandas and imported: the same config and record."""
    pd = pytest.importorskip("pandas")
    if suffix == ".parquet":
        pytest.importorskip("pyarrow")
    from implicitbias.validation.runs_format import read_runs

    model = _net()
    opt = torch.optim.SGD(model.parameters(), lr=0.1, weight_decay=1e-3)
    meter = ForgettingMeter(model, opt, batch_size=B, n_train=N, sigma_w=1.5, seed=2, dataset="toy")
    _train(model, opt, meter, set_lr=SCHEDULES["cosine"])
    frame = pd.DataFrame(meter.rows())
    path = tmp_path / f"runs{suffix}"
    {".csv": lambda: frame.to_csv(path, index=False), ".jsonl": lambda: frame.to_json(path, orient="records", lines=True,
                                                                                       double_precision=15),
     ".parquet": lambda: frame.to_parquet(path)}[suffix]()
    [(config, record)] = read_runs(path)
    mine = meter.record()
    assert config == meter.config() if suffix != ".jsonl" else config.keys() == meter.config().keys()
    assert record["summary"]["clocks_from"] == "recorded per step"
    for a, b in zip(record["history"], mine["history"]):
        assert a.keys() == b.keys()
        for key in ("train_acc", "val_loss", "test_acc", "kernel_norm", "train_loss"):
            assert a[key] == pytest.approx(b[key], rel=1e-14)
        assert a["clocks"] == pytest.approx(b["clocks"], rel=1e-14)


def test_save_puts_the_run_where_analyse_finds_it(tmp_path):
    from implicitbias.store import Store
    from implicitbias.validation.runs_format import imported_runs

    model = _net()
    opt = torch.optim.Adam(model.parameters(), lr=0.01)
    meter = ib.ForgettingMeter(model, opt, batch_size=B, n_train=N, sigma_w=1.0, seed=0)
    _train(model, opt, meter, epochs=2)
    config, record = meter.save(tmp_path / "s.sqlite")
    with Store(tmp_path / "s.sqlite") as store:
        assert imported_runs(store) == [(config, record)]
    with pytest.raises(ParameterError, match="store must be"):
        meter.save(3)


def test_lightning_callback_records_a_fit(tmp_path):
    """The Lightning callback on a tiny LightningModule (3 epochs): the clocks of the steps Lightning
    took equal the calculator's for its constant rate, one row per epoch."""
    L = pytest.importorskip("lightning.pytorch")
    x, y = _data()

    class Tiny(L.LightningModule):
        def __init__(self):
            super().__init__()
            self.net = _net()

        def training_step(self, batch, i):
            xb, yb = batch
            z = self.net(xb)
            self.log("train_acc", (z.argmax(1) == yb).float().mean(), on_epoch=True, on_step=False)
            return nn.functional.cross_entropy(z, yb)

        def validation_step(self, batch, i):
            xb, yb = batch
            z = self.net(xb)
            acc = (z.argmax(1) == yb).float().mean()
            self.log_dict({"val_loss": nn.functional.cross_entropy(z, yb), "val_acc": acc, "test_acc": acc})

        def configure_optimizers(self):
            return torch.optim.SGD(self.parameters(), lr=0.05)

    loader = torch.utils.data.DataLoader(torch.utils.data.TensorDataset(x, y), batch_size=B)
    callback = ib.ForgettingCallback(batch_size=B, n_train=N, sigma_w=1.0, seed=0)
    trainer = L.Trainer(max_epochs=3, callbacks=[callback], logger=False, enable_checkpointing=False,
                        enable_progress_bar=False, enable_model_summary=False, num_sanity_val_steps=0,
                        default_root_dir=tmp_path, accelerator="cpu")
    trainer.fit(Tiny(), loader, loader)
    record = callback.meter.record()
    assert [r["epoch"] for r in record["history"]] == [1, 2, 3]
    assert callback.meter.save(tmp_path / "s.sqlite")[1] == record
    assert callback.meter.clocks().cumulative == forgetting_clocks("sgd", 0.05, B, N, 3).cumulative


def test_inferred_scale_invariant_kernels_are_the_ones_the_output_ignores():
    """Module-order inference (validation.init.scale_invariant_kernels) against the definition: in
    training mode (batch statistics), scaling a listed kernel by 3 leaves the logits unchanged;
    scaling an unlisted one (the head) changes them."""
    from implicitbias.validation.init import kernel_modules, scale_invariant_kernels
    from implicitbias.validation.models import build_model

    torch.manual_seed(0)
    model = build_model("resnet9", (1, 8, 8), 10, width=0.125)
    x = torch.randn(16, 1, 8, 8)
    listed = scale_invariant_kernels(model)
    kernels = dict(kernel_modules(model))
    assert listed and set(listed) < set(kernels)
    before = model(x).detach()
    for name, module in kernels.items():
        with torch.no_grad():
            module.weight.mul_(3.0)
            after = model(x).detach()
            module.weight.div_(3.0)
        assert torch.allclose(after, before, rtol=1e-4, atol=1e-4) == (name in listed), name


@settings(max_examples=60, deadline=None)
@given(n=st.integers(2, 60), b=st.integers(1, 60), epochs=st.integers(1, 4), decay=st.sampled_from([0.0, 1e-4, 0.3]),
       rates=st.lists(st.floats(1e-6, 10.0), min_size=1, max_size=8))
def test_any_rates_give_the_calculators_clocks(n, b, epochs, decay, rates):
    """Arbitrary per-step rates (cycled), set by hand before each step: the meter's clocks are the
    calculator's on the same rates, exactly.  The steps move nothing (no gradients): only the rates
    the optimiser is asked to use matter."""
    b = min(b, n)
    model = _net()
    opt = torch.optim.SGD(model.parameters(), lr=1.0, weight_decay=decay)
    meter = ForgettingMeter(model, opt, batch_size=b, n_train=n, sigma_w=1.0, seed=0)
    eta = lambda k: rates[k % len(rates)]  # noqa: E731
    spe = steps_per_epoch(n, b)
    for e in range(epochs):
        for j in range(spe):
            opt.param_groups[0]["lr"] = eta(e * spe + j)
            opt.step()
        meter.epoch_end(train_acc=0.5, val_loss=1.0, val_acc=0.5, test_acc=0.5)
    assert meter.clocks().cumulative == forgetting_clocks("sgd", eta, b, n, epochs, decay).cumulative
