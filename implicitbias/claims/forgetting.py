"""What Spec B's claims C1-C7 share: the experiment tiers, the roles of their groups, the shared
thresholds and the wording of CIs and failures.

Source: Das, Beneventano, Dey, McKinley, Poggio, arXiv 2605.29152 (Spec B, sections 1-2).

A *tier* is one experimental design, a packaged sweep spec (``validation/specs``): its
``[[grid]]`` blocks are settings (optimiser, learning rate, batch size, decay, horizon) named for
the roles they play, each over the spec's sigma_w x seed grid; with ``options.batched`` the runs
that can share a step (across blocks too) train as one ensemble (``validation.batched``:
bit-for-bit the solo runs on the toy MLP), each stored as an ordinary run record.  Users
sweep and analyse the same design (``implicitbias sweep default``, ``implicitbias analyse
default``) and get the report's cells and verdicts.  A claim measures the blocks it needs
through ``ctx.map`` (cached, resumable, fingerprinted) and judges what they show; the same rule
judges every tier, and ``implicitbias analyse`` judges a sweep's runs with it.

Roles are inferred from the groups themselves (:func:`roles`), so tiers and user sweeps are read
the same way:

- baseline: plain SGD (``sgd``, no decay) at the smallest learning rate, at the most common batch
  size, shortest horizon (low-lr SGD, C1);
- longer: the baseline's setting at longer horizons (C2);
- adaptive: Adam / AdamW / RMSProp / sign / Muon groups in the baseline's setting otherwise (C3);
- forgetters: plain SGD at a larger learning rate, and SGD-family groups with L2 decay (C4);
- batch series: plain SGD at the baseline's learning rate and horizon over batch sizes (C5);
- deep: ResNet-56 / ResNet-110 groups (C6).

Tiers: ``default.toml`` (the report's default: the BatchNorm MLP on MNIST-1D, minutes) and
``fashion_mnist_cpu.toml`` (a narrow BatchNorm ResNet-9 on a Fashion-MNIST subset plus
ResNet-56/110, hours on a CPU: ``benchmarks/run_fashion_mnist_tier.py``; report tier ``full``).
Every low-lr SGD run of the toy tier interpolates (>= 99.5% training accuracy) within its horizon.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from implicitbias.claims import Claim, Evidence, Threshold, Verdict
from implicitbias.validation.analysis import Group, family, group_runs
from implicitbias.validation.batched import train_ensembles
from implicitbias.validation.data import DataUnavailable
from implicitbias.validation.groups import setting
from implicitbias.validation import run as run_mod

__all__ = [
    "Tier", "tier", "TOY", "FASHION_MNIST", "REPORT_TIERS", "shallow_blocks", "Plan", "GroupClaim", "Roles", "roles",
    "measure_groups", "MIN_SEEDS", "DEEP", "fmt_ci", "fmt_failures", "span", "stability",
    "overview", "judged", "judge_runs", "judge_groups", "memory_verdict",
]

DEEP = ("resnet56", "resnet110")
_OPTIMISER_KEYS = ("optimizer", "lr", "weight_decay", "momentum")
_ALWAYS_FREE = ("eval_every", "eval_dense_until")  # how often a run is evaluated never changes its training

MIN_SEEDS = Threshold(3, "complete seeds a group needs: fewer leave the ANOVA's seed noise nearly unmeasured")


@dataclass(frozen=True)
class Tier:
    """One experimental design: a packaged sweep spec whose ``[[grid]]`` labels are the blocks."""

    spec: str
    name: str
    description: str
    blocks: Mapping[str, tuple[dict, ...]]
    options: Mapping[str, Any]
    ensembles: bool

    def configs(self, block: str) -> list[dict]:
        """The canonical run configs of ``block``, in the spec's order."""
        return list(self.blocks[block])

    @property
    def sigma_w(self) -> list[float]:
        return sorted({c["sigma_w"] for cs in self.blocks.values() for c in cs})

    @property
    def seeds(self) -> list[int]:
        return sorted({c["seed"] for cs in self.blocks.values() for c in cs})

    def cost(self, block: str) -> float:
        """Relative cost of a block (runs x epochs x training images x width^2), to start long ones first."""
        c = self.blocks[block]
        return len(c) * c[0]["epochs"] * (c[0]["train_size"] or 1000) * c[0]["width"] ** 2


@functools.cache
def tier(spec: str) -> Tier:
    """The tier of a packaged spec (``validation/specs/<spec>.toml``), loaded once per process.

    Its blocks are the spec's ``[[grid]]`` labels; ``options.batched`` makes every block one
    ensemble (otherwise every run is its own cell); the other options are runtime options.
    """
    from implicitbias.validation.sweep import load_spec

    s = load_spec(spec)
    blocks: dict[str, list[dict]] = {}
    for label, config in s.runs:
        blocks.setdefault(label, []).append(config)
    options = {k: v for k, v in s.options.items() if k != "batched"}
    return Tier(spec, s.name, s.description, {k: tuple(v) for k, v in blocks.items()}, options,
                bool(s.options.get("batched")))


TOY = "default"  # validation/specs/default.toml: the report's default tier
FASHION_MNIST = "fashion_mnist_cpu"  # validation/specs/fashion_mnist_cpu.toml: report tier full
REPORT_TIERS = {"default": (TOY,), "gpu": (TOY,), "full": (TOY, FASHION_MNIST)}  # the specs each report tier runs


def shallow_blocks(spec: str) -> tuple[str, ...]:
    """The blocks of a tier other than the deep ResNets (C6 runs those on its own)."""
    return tuple(b for b, cs in tier(spec).blocks.items() if cs[0]["arch"] not in DEEP)


@dataclass(frozen=True)
class Plan:
    """A claim's typed config: which blocks of which tiers (packaged specs) it measures, one
    Evidence per tier; ``None`` as the blocks means every block but the deep ResNets."""

    tiers: tuple[tuple[str, tuple[str, ...] | None], ...]

    def resolved(self) -> list[tuple[Tier, tuple[str, ...]]]:
        return [(tier(spec), shallow_blocks(spec) if blocks is None else blocks) for spec, blocks in self.tiers]


class GroupClaim(Claim):
    """A Spec B claim: judged from groups of runs, whether a tier's blocks or any sweep's runs.

    ``evidence(groups, label)`` reads its groups' roles (:func:`roles`) and measures what it
    judges; ``measure`` trains (or reads) the blocks of its plan's tiers and calls it, one
    Evidence per tier; ``implicitbias analyse`` calls ``evidences`` on a sweep's runs (one
    Evidence, unless a claim judges several data sets in them, as C7 its optimiser families).
    """

    def evidence(self, groups: Sequence[Group], label: str = "") -> Evidence:
        raise NotImplementedError

    def evidences(self, groups: Sequence[Group], label: str = "") -> list[Evidence]:
        return [self.evidence(groups, label)]

    def measure(self, ctx, config: Plan) -> list[Evidence]:
        return [e for t, blocks in config.resolved()
                for e in self.evidences_of(lambda: measure_groups(ctx, t, blocks), t.name)]

    def evidences_of(self, measure: Callable[[], list[Group]], label: str) -> list[Evidence]:
        """``evidences`` of the groups ``measure()`` trains or reads, each with the verdicts on two
        seed halves (:meth:`halves`) for claims with simulated operating characteristics; one
        ``not run`` Evidence (``missing``) when their data files are not on this machine, so other
        tiers still run."""
        try:
            groups = measure()
        except DataUnavailable as exc:
            return [Evidence(f"{label}: needs its data files", {}, label, missing=str(exc))]
        return self.stable_evidences(groups, label)

    def stable_evidences(self, groups: Sequence[Group], label: str = "") -> list[Evidence]:
        """``evidences``, each with the verdicts on two seed halves (:meth:`halves`, computed once)
        for claims with simulated operating characteristics."""
        out = self.evidences(groups, label)
        if hasattr(self, "oc_sims"):
            halves = self.halves(groups, label)
            for e in out:
                e.data["halves"] = [(part, verdicts.get(e.label, "not run")) for part, verdicts in halves]
        return out

    def halves(self, groups: Sequence[Group], label: str = "") -> list[tuple[list[int], dict[str, str]]]:
        """Stability: the verdicts of the same rule (its intervals, no simulation) on two disjoint
        halves of the seeds, each group split in its own sorted seeds (the first half of every
        group's seeds, then the second), ``[(seeds, {evidence label: verdict}), (seeds, {...})]``;
        empty when a group has fewer than 2 x ``min_seeds`` seeds."""
        own = [sorted({c["seed"] for c, _ in g.runs}) for g in groups]
        if not own or min(len(s) for s in own) < 2 * self.threshold("min_seeds"):
            return []
        out, saved = [], self.oc_sims
        try:
            self.oc_sims = 0
            for first in (True, False):
                parts = [set(s[: len(s) // 2] if first else s[len(s) // 2:]) for s in own]
                sub = [Group(g.setting, [(c, r) for c, r in g.runs if c["seed"] in part]) for g, part in zip(groups, parts)]
                out.append((sorted(set().union(*parts)), {e.label: self.judge(e).verdict for e in self.evidences(sub, label)}))
        finally:
            self.oc_sims = saved
        return out


def stability(halves: Sequence | None, verdict: str) -> str:
    """"same verdict on seeds 10-13 (agrees) and 14-17 (agrees), intervals only", or "not the same
    verdict ...", from an Evidence's ``halves``; when they could not be judged (a group with fewer
    than 2 x ``MIN_SEEDS`` seeds) it says so; "" when none were computed (``halves`` None)."""
    if halves is None:
        return ""
    if len(halves) != 2:
        return f"not judged on seed halves (a group has fewer than 2 x {float(MIN_SEEDS):g} seeds)"
    (a, va), (b, vb) = halves
    return (f"{'same verdict' if va == vb == verdict else 'not the same verdict'} on seeds {span(a)} ({va}) and "
            f"{span(b)} ({vb}), intervals only")


def measure_groups(ctx, tier: Tier, blocks: Sequence[str]) -> list[Group]:
    """Train (or read from the store) the runs of ``blocks`` of ``tier``; their groups.

    Every run is stored as an ordinary run record (kind ``validation.run``, the records
    ``implicitbias sweep`` writes too).  With ``tier.ensembles`` the missing runs train as
    ensembles (``validation.batched.train_ensembles``: every run of these blocks that can share
    a step in one model, costly ensembles first so a pool of workers finishes together);
    otherwise every run is its own cell.  ``DataUnavailable`` before anything runs when the
    blocks' data files are not on this machine.
    """
    configs = [c for b in blocks for c in tier.configs(b)]
    run_mod.require_data(configs)
    if tier.ensembles:
        records = train_ensembles(configs, ctx.store, executor=ctx.executor, progress=ctx.progress,
                                  options=tier.options, desc=f"{tier.name} ensembles")
    else:
        records = ctx.map(run_mod.KIND, functools.partial(run_mod.execute, options=dict(tier.options)), configs,
                          desc=f"{tier.name} runs")
    return group_runs(list(zip(configs, records)))


# -- roles of groups ---------------------------------------------------------------------------
@dataclass
class Roles:
    """The groups of a set of runs by the part they play in the claims (module docstring)."""

    baseline: Group | None = None
    longer: list[Group] = field(default_factory=list)
    adaptive: list[Group] = field(default_factory=list)
    forgetters: list[Group] = field(default_factory=list)
    batch_series: list[Group] = field(default_factory=list)
    deep: list[Group] = field(default_factory=list)
    groups: list[Group] = field(default_factory=list)


def _same(a: Group, b: Group, free: Sequence[str]) -> bool:
    keys = (*free, *_ALWAYS_FREE)
    return setting(a.setting, keys) == setting(b.setting, keys)


def _most_common(values: Sequence) -> Any:
    return max(sorted(set(values)), key=values.count)


def roles(groups: Sequence[Group]) -> Roles:
    """Assign each group its role (module docstring); groups that play none are left out."""
    groups = list(groups)
    shallow = [g for g in groups if g.setting["arch"] not in DEEP]
    out = Roles(deep=[g for g in groups if g.setting["arch"] in DEEP], groups=groups)
    plain = [g for g in shallow if g.setting["optimizer"] == "sgd" and g.setting["weight_decay"] == 0]
    if not plain:
        return out
    batch = _most_common([g.setting["batch_size"] for g in shallow])
    lr0 = min(g.setting["lr"] for g in plain)
    low = [g for g in plain if g.setting["lr"] == lr0]
    at_batch = [g for g in low if g.setting["batch_size"] == batch] or low
    base = out.baseline = min(at_batch, key=lambda g: g.setting["epochs"])
    out.longer = sorted((g for g in low if _same(g, base, ("epochs",)) and g.setting["epochs"] > base.setting["epochs"]),
                        key=lambda g: g.setting["epochs"])
    out.adaptive = [g for g in shallow if family(g.setting) == "adaptive" and _same(g, base, _OPTIMISER_KEYS)]
    out.forgetters = [g for g in shallow if _same(g, base, _OPTIMISER_KEYS) and g is not base and (
        family(g.setting) == "sgd_l2" or (g.setting["optimizer"] == "sgd" and g.setting["lr"] > lr0))]
    out.batch_series = sorted((g for g in low if _same(g, base, ("batch_size",))), key=lambda g: g.setting["batch_size"])
    return out


def memory_verdict(parts_at: Callable[[str, int], tuple[list, str]], judged: str, seeds: Sequence[int],
                   sims: int, context: str = "", halves: Sequence | None = None) -> Verdict:
    """The verdict of a memory rule (``claims.memory_rules``) judged at checkpoint ``judged``, with
    its simulated operating characteristics; the same rule at the other checkpoints stated beside.

    ``parts_at(checkpoint, sims)`` returns the rule's parts there and a failed premise ("" if none);
    ``sims`` = 0 judges by the intervals alone (no simulation, no underpowered verdict: the rule's tests).
    ``halves``: the verdicts on two disjoint seed halves (``GroupClaim.halves``), stated as stability.
    """
    from implicitbias.claims import memory_rules as mr
    from implicitbias.validation.analysis import CHECKPOINTS

    decision = mr.decide(*parts_at(judged, sims), simulate=sims > 0)
    beside = {cp: mr.decide(*parts_at(cp, 0), simulate=False).verdict for cp in CHECKPOINTS if cp != judged}
    differ = [cp for cp, v in beside.items() if v != decision.verdict]
    oc = decision.oc
    rates = ("OC not simulated" if oc is None else
             f"simulated ({oc.sims} tiers, n = {oc.n}): P(agrees | false) {oc.agree_false:.3f}, P(disagrees | true) "
             f"{oc.disagree_true:.3f}, P(inconclusive | true) {oc.inconclusive_true:.3f}")
    measured = "; ".join([mr.describe(p) for p in decision.parts] + [rates] + ([context] if context else []))
    also = ", ".join(f"{cp}: {v}" for cp, v in beside.items())
    reason = (f"{decision.reason} (at the {judged} checkpoint); same rule at {also}"
              + (f" (differs at {', '.join(differ)})" if differ else ""))
    stable = stability(halves, decision.verdict)
    if stable:
        reason += f"; stability: {stable}"
    estimate = replace(mr.estimate_of(decision, judged, seeds), stability=stable)
    return Verdict(decision.verdict, reason, measured, {"estimate": estimate, "beside": beside,
                                                        "parts": decision.parts})


def span(seeds: Sequence[int]) -> str:
    """``10-17`` for consecutive seeds, else ``1, 3, 5``."""
    s = sorted(seeds)
    return f"{s[0]}-{s[-1]}" if s == list(range(s[0], s[-1] + 1)) and len(s) > 2 else ", ".join(map(str, s))


# -- wording -----------------------------------------------------------------------------------
def fmt_ci(ci: Mapping, unit: str = "", seeds: bool = True) -> str:
    """``12.3 [9.1, 15.0] pts, 4 seeds``: an estimate with its 95% CI and n."""
    if ci["n"] == 0 or math.isnan(ci["estimate"]):
        return "n/a (no seeds)"
    tail = f", {ci['n']} seed{'s' if ci['n'] != 1 else ''}" if seeds else ""
    return f"{ci['estimate']:.2f} [{ci['lo']:.2f}, {ci['hi']:.2f}]{unit}{tail}"


def fmt_failures(summary: Mapping) -> str:
    """Interpolated and diverged counts of a group summary, naming the diverged runs."""
    text = f"{summary['n_interpolated']}/{summary['n_runs']} interpolate"
    diverged = [r for r in summary["runs"] if r["diverged_epoch"] is not None]
    if diverged:
        named = "; ".join(f"sigma_w {r['sigma_w']:g} seed {r['seed']} at epoch {r['diverged_epoch']}: {r['diverged_reason']}"
                          for r in diverged[:3])
        more = f"; {len(diverged) - 3} more" if len(diverged) > 3 else ""
        text += f", {len(diverged)} diverged (left out: {named}{more})"
    return text


def overview(ctx, groups: Sequence[Group], name: str) -> str:
    """Markdown: one row per group (runs, failures, interpolation, spreads and slope with CIs, clocks)
    and the figure of end-of-training spread against each family's governing clock."""
    from implicitbias.claims.c7_clocks_collapse_the_spreads import clock_points
    from implicitbias.claims.forgetting_figures import clock_figure
    from implicitbias.figures import markdown_table
    from implicitbias.theory.clocks import CLOCKS
    from implicitbias.validation.analysis import summarise

    rows = []
    for g in groups:
        s = summarise(g)
        taus = [r["tau_interp"] for r in s["runs"] if r["tau_interp"] is not None]
        rows.append([s["label"], f"{s['n_runs']} ({s['n_diverged']} diverged)", f"{s['n_interpolated']}/{s['n_runs']}",
                     f"{min(taus)}-{max(taus)}" if taus else "-", fmt_ci(s["spread_selected"], seeds=False),
                     fmt_ci(s["spread_final"], seeds=False), fmt_ci(s["norm_slope"], seeds=False),
                     *(f"{s['clocks'][c]:.3g}" for c in CLOCKS), s["governing"]])
    points = [p for p in clock_points(groups) if p["clock"] > 0]
    figure = f"![spread vs clock]({ctx.link(clock_figure(ctx, points, name))})" if points else ""
    return "\n".join([
        "Spread = best minus worst seed-mean test accuracy across sigma_w (points), at the checkpoint of minimum "
        "validation loss (selected) and at the end; 95% bootstrap CIs over seeds; slope = d log||W_final|| / "
        "d log sigma_w; interpolation = 99.5% training accuracy (epochs: first reached, over all runs). Diverged "
        "runs are counted and left out of spreads and slopes.", "",
        markdown_table(["group", "runs", "interpolate", "interp. epochs", "spread selected [CI]", "spread end [CI]",
                        "norm slope [CI]", *CLOCKS, "governing"], rows), "", figure, ""])


def judge_runs(ctx, runs: Sequence[tuple[dict, dict]], title: str) -> str:
    """Markdown of ``implicitbias analyse``: the groups of ``runs`` and every Spec B claim judged on them."""
    return judge_groups(ctx, group_runs(runs), title)


def judged(groups: Sequence[Group], label: str = "") -> list:
    """Every Spec B claim judged on ``groups``: one ``claims.Result`` per piece of evidence."""
    from implicitbias.claims import Result, registry

    return [Result(claim, evidence, claim.judge(evidence))
            for claim in registry().values() if isinstance(claim, GroupClaim)
            for evidence in claim.stable_evidences(groups, label)]


def judge_groups(ctx, groups: Sequence[Group], title: str, label: str = "", results: Sequence | None = None) -> str:
    """Markdown: the overview of ``groups`` and every Spec B claim judged on them (claims table first);
    ``results`` are :func:`judged`'s when the caller has them already."""
    from implicitbias.figures import markdown_table

    if not groups:
        return f"# Analysis: {title}\n\nNo finished runs (run `implicitbias sweep SPEC`)."
    rows, details = [], []
    for r in judged(groups, label) if results is None else results:
        claim, evidence, verdict = r.claim, r.evidence, r.verdict
        rows.append([claim.id, claim.statement, evidence.check, verdict.measured, verdict.verdict, verdict.reason])
        details += [f"### {claim.id}: {claim.statement}", "", f"**{verdict.verdict}**: {verdict.reason}", "",
                    claim.render(ctx, evidence, verdict), ""]
    return "\n".join([f"# Analysis: {title}", "", "## Claims", "",
                      markdown_table(["claim", "statement", "check", "measured", "verdict", "why"], rows), "",
                      "## Groups", "", overview(ctx, groups, f"{label or 'analysis'}_spread_vs_clock"), *details])
