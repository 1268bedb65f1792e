"""Hand-picked mutants of Spec B's verdict rules (issue 19): each is applied to the source, the
named tests run, and the source restored; every mutant must fail a test.  Run from the repository
root: ``python benchmarks/mutate_spec_b_rules.py [words]`` (only the mutants whose names contain one
of the words, if given; a few minutes on 2 cores; results in benchmarks/RESULTS.md, "Mutations of
the Spec B rules", "Mutations of the C1-C5 statistics" and "C7's direction test: mutants")."""

import os
import subprocess
import sys

# (name, file, original text, mutated text, the tests that must fail)
MUTANTS = [
    ('C1 judged at the end', 'implicitbias/claims/forgetting/c1_low_lr_sgd_remembers.py',
     'judged = "interpolating"',
     'judged = "end"',
     ['tests/test_c1_low_lr_sgd_remembers.py']),
    ('C1 judged at the all-checkpoint minimum', 'implicitbias/claims/forgetting/c1_low_lr_sgd_remembers.py',
     'judged = "interpolating"',
     'judged = "all"',
     ['tests/test_c1_low_lr_sgd_remembers.py']),
    ('C3/C4 judged at the end', 'implicitbias/claims/forgetting/c3_adaptive_methods_forget.py',
     'judged = "interpolating"',
     'judged = "end"',
     ['tests/test_c3_adaptive_methods_forget.py', 'tests/test_c4_sgd_forgets_with_larger_lr_or_l2.py']),
    ('C2 judged at the all-checkpoint minimum', 'implicitbias/claims/forgetting/c2_longer_training_keeps_the_spread.py',
     'judged = "end"',
     'judged = "all"',
     ['tests/test_c2_longer_training_keeps_the_spread.py']),
    ('C5 judged at the interpolating checkpoint', 'implicitbias/claims/forgetting/c5_larger_batches_keep_more_memory.py',
     'judged = "all"',
     'judged = "interpolating"',
     ['tests/test_c5_larger_batches_keep_more_memory.py']),
    ('FORGOTTEN bound x2', 'implicitbias/claims/forgetting/memory_rules.py',
     'FORGOTTEN = Threshold(math.sqrt(PAPER_RATIO)',
     'FORGOTTEN = Threshold(2 * math.sqrt(PAPER_RATIO)',
     ['tests/test_memory_rules.py', 'tests/test_c3_adaptive_methods_forget.py']),
    ('ALMOST_ZERO bound x2', 'implicitbias/claims/forgetting/memory_rules.py',
     'ALMOST_ZERO = Threshold(PAPER_RATIO,',
     'ALMOST_ZERO = Threshold(2 * PAPER_RATIO,',
     ['tests/test_memory_rules.py', 'tests/test_c4_sgd_forgets_with_larger_lr_or_l2.py']),
    ('NOISE bound x2', 'implicitbias/claims/forgetting/memory_rules.py',
     'NOISE = Threshold(1.0,',
     'NOISE = Threshold(2.0,',
     ['tests/test_c1_low_lr_sgd_remembers.py']),
    ('C3/C4 group bound x2 inside the rule', 'implicitbias/claims/forgetting/c3_adaptive_methods_forget.py',
     'mem, ref, self.bound_of(g), True, sims',
     'mem, ref, 2 * self.bound_of(g), True, sims',
     ['tests/test_c3_adaptive_methods_forget.py', 'tests/test_c4_sgd_forgets_with_larger_lr_or_l2.py']),
    ('C1 memory bound x2 inside the rule', 'implicitbias/claims/forgetting/c1_low_lr_sgd_remembers.py',
     'mem, self.threshold("remembers"), False, sims',
     'mem, 2 * self.threshold("remembers"), False, sims',
     ['tests/test_c1_low_lr_sgd_remembers.py']),
    ('C1 norm-slope bound x2 inside the rule', 'implicitbias/claims/forgetting/c1_low_lr_sgd_remembers.py',
     'd["slopes"], self.threshold("coupled")',
     'd["slopes"], 2 * self.threshold("coupled")',
     ['tests/test_c1_low_lr_sgd_remembers.py']),
    ('C3 norm-slope bound x2 inside the rule', 'implicitbias/claims/forgetting/c3_adaptive_methods_forget.py',
     'slopes_of(g), self.threshold("common_norm")',
     'slopes_of(g), 2 * self.threshold("common_norm")',
     ['tests/test_c3_adaptive_methods_forget.py']),
    ('any group agreeing is enough (combine)', 'implicitbias/claims/forgetting/memory_rules.py',
     'if outcomes and all(o == "agrees" for o in outcomes):',
     'if outcomes and any(o == "agrees" for o in outcomes):',
     ['tests/test_memory_rules.py', 'tests/test_c3_adaptive_methods_forget.py']),
    ('every group must disagree (combine)', 'implicitbias/claims/forgetting/memory_rules.py',
     'if any(o == "disagrees" for o in outcomes):',
     'if outcomes and all(o == "disagrees" for o in outcomes):',
     ['tests/test_memory_rules.py', 'tests/test_c3_adaptive_methods_forget.py']),
    ('underpowered gate off', 'implicitbias/claims/forgetting/memory_rules.py',
     'if simulate and (oc is None or oc.wrong > float(MAX_WRONG)):',
     'if False:',
     ['tests/test_memory_rules.py', 'tests/test_c1_low_lr_sgd_remembers.py']),
]

# The statistics of C1-C5 (issue 27 item 6): each branch of each routine, the Monte Carlo p-values included
MS, RS, MR = 'numerics/metrics/memory_stats.py', 'numerics/metrics/resampling.py', 'implicitbias/claims/forgetting/memory_rules.py'
STATS_TESTS = ['tests/test_memory_stats.py', 'tests/test_resampling.py', 'tests/test_resampling_references.py',
               'tests/test_memory_rules.py']
MUTANTS += [(name, path, old, new, STATS_TESTS) for name, path, old, new in [
    ('permutation p, Monte Carlo: hits / draws', MS,
     'return float(res.pvalue), count',
     'return float(res.pvalue if exact else (res.pvalue * (1 + _RESAMPLES) - 1) / _RESAMPLES), count'),
    ('permutation p, Monte Carlo only: the wrong tail', MS,
     'alternative="greater",\n', 'alternative="greater" if exact else "less",\n'),
    ('permutation p: two-sided', MS, 'alternative="greater",\n', 'alternative="two-sided",\n'),
    ('permutation p, Monte Carlo: 999 draws', MS, 'math.inf if exact else _RESAMPLES', 'math.inf if exact else 999'),
    ('permutation p: always Monte Carlo', MS, 'exact = count <= EXACT_UP_TO\n\n    def statistic',
     'exact = False\n\n    def statistic'),
    ('rank test, Monte Carlo: hits / draws', MS,
     'return hits / len(null) if exact else (1 + hits) / (1 + len(null))', 'return hits / len(null)'),
    ('rank test, Monte Carlo only: the tails swapped', MS, '"p_less": p(int((null <= observed + tol).sum()))',
     '"p_less": p(int(((null <= observed + tol) if exact else (null >= observed - tol)).sum()))'),
    ('rank test, Monte Carlo: shuffled across draws, not within', MS, 'axis=1)) for rx, ry in data)',
     'axis=0)) for rx, ry in data)'),
    ('rank test: the tails swapped', MS, '"p_less": p(int((null <= observed + tol).sum()))',
     '"p_less": p(int((null >= observed - tol).sum()))'),
    ('snr interval: per-tail 1 - level', MS, 'tail = (1 - level) / 2\n    out = []', 'tail = 1 - level\n    out = []'),
    ('snr interval: finite upper end beyond the cap', MS, 'np.where(capped, np.inf, out[1])', 'out[1]'),
    ('snr interval: NaN F not NaN', MS, 'lower = np.where(np.isnan(raw), np.nan, out[0])', 'lower = out[0]'),
    ('snr interval: lambda / (n df2)', MS, 'np.sqrt(lam / (n * df1))', 'np.sqrt(lam / (n * df2))'),
    ('snr interval: 20 halvings', MS, 'for _ in range(60):', 'for _ in range(20):'),
    ('snr interval: lower end 0 only below the central cdf strictly', MS, 'np.where(at0 <= target, 0.0',
     'np.where(at0 < 0.5 * target, 0.0'),
    ('anova: MS_e over n (k - 1)', MS, '.sum((-2, -1)) / ((n - 1) * (k - 1))', '.sum((-2, -1)) / (n * (k - 1))'),
    ('anova: MS_w without n', MS, 'ms_w = n * ((col', 'ms_w = ((col'),
    ('t interval: n degrees of freedom', MS, 't.ppf(1 - (1 - level) / 2, len(v) - 1)', 't.ppf(1 - (1 - level) / 2, len(v))'),
    ('percentiles: linear interpolation', MS, 'method="lower")', 'method="linear")'),
    ('complete: a column missing in half the seeds dropped', MS, 'present.sum(0) * 2 >= max', 'present.sum(0) * 2 > max'),
    ('ratio draws: the group drawn with the reference noise', MS,
     'simulate_tables(group.shape, group.m, group.sigma, group.n, draws, rng)',
     'simulate_tables(group.shape, group.m, ref.sigma, group.n, draws, rng)'),
    ('simulated tables: effects not rescaled to m', MS, 'effects = a * (m / scale) if scale > 0', 'effects = a if scale > 0'),
    ('ratio coverages: the redraws with unshrunk sigma_w means', MS,
     'effects = shape * np.where(scale > 0, a.m / np.where(scale > 0, scale, 1.0), 0.0)[:, None]',
     'effects = shape'),
    ('ratio coverages: the redraws without the noise of the tier', MS, 'sigma = np.sqrt(a.ms_e)',
     'sigma = np.sqrt(a.ms_e) * 0 + 1'),
    ('ratio interval: coverage tolerance the wrong way', MS, 'c >= level - tol', 'c >= level + tol'),
    ('bootstrap: basic (reflected) interval', RS, 'n_resamples=_BOOTSTRAP, method="percentile",\n                             rng',
     'n_resamples=_BOOTSTRAP, method="basic",\n                             rng'),
    ('bootstrap: samples paired', RS, 'paired=False', 'paired=True'),
    ('bootstrap: level ignored', RS, 'confidence_level=level', 'confidence_level=CONFIDENCE'),
    ('mean_ci_rows: one-sided tails', RS, '[(1 - level) / 2, (1 + level) / 2]', '[1 - level, level]'),
    ('mean_ci_rows: reflected ends', RS, 'out.append((np.minimum(lo, mean), np.maximum(hi, mean)))',
     'out.append((np.minimum(2 * mean - hi, mean), np.maximum(2 * mean - lo, mean)))'),
    ('oc_snr: world ignored', MR, 'for s in _worlds(bound, below, world):', 'for s in _worlds(bound, below, WORLD):'),
    ('oc_mean: world ignored', MR, 'for slope in _worlds(bound, below, world):', 'for slope in _worlds(bound, below, WORLD):'),
    ('oc_ratio: world ignored', MR, 'true, false = _worlds(bound, below, world)', 'true, false = _worlds(bound, below, WORLD)'),
    ('worlds: claim-true and claim-false swapped', MR,
     'return (bound / world, bound * world) if below else (bound * world, bound / world)',
     'return (bound * world, bound / world) if below else (bound / world, bound * world)'),
]]

ROBUST_TESTS = ['tests/test_memory_stats.py::test_jackknife_se_from_updated_sums_equals_the_leave_one_seed_out_anovas',
                'tests/test_memory_stats.py::test_robust_interval_ends_are_the_bootstrap_t_quantiles_of_the_enumerated_'
                'bootstrap_joined_with_the_exact',
                'tests/test_memory_stats.py::test_robust_interval_is_vectorised_over_tables_and_refuses_too_few_seeds',
                'tests/test_memory_rules.py::test_oc_of_the_robust_interval_matches_an_independent_simulation_of_its_tables',
                'tests/test_c1_low_lr_sgd_remembers.py::test_the_memory_part_reads_the_robust_interval_of_its_table']
TABLE_TESTS = ['tests/test_memory_rules.py::test_oc_of_the_mean_part_on_drawn_normal_tables_matches_the_noncentral_t_'
               'distribution', 'tests/test_memory_rules.py::test_oc_of_the_mean_part_on_resampled_rows_matches_the_exact_'
               'bootstrap_enumeration', 'tests/test_memory_rules.py::test_oc_of_the_mean_part_with_student_t_rows_matches_'
               'an_independent_monte_carlo', 'tests/test_memory_rules.py::test_drawn_tables_keep_the_fitted_sigma_w_shape_'
               'with_the_worlds_slope', 'tests/test_memory_stats.py::test_slope_table_values_are_the_per_seed_least_'
               'squares_slopes_of_the_present_cells']
C1 = 'implicitbias/claims/forgetting/c1_low_lr_sgd_remembers.py'
MUTANTS += [(f'C1 tails: {name}', path, old, new, tests) for name, path, old, new, tests in [  # issue 27 item 6 gaps
    ('jackknife: deviations from the smallest', MS, '((loo - loo.mean(-1, keepdims=True)) ** 2).sum(-1))\n\n\ndef robust',
     '((loo - loo.min(-1, keepdims=True)) ** 2).sum(-1))\n\n\ndef robust', ROBUST_TESTS),
    ('jackknife: SS_e without the row left out in the grand term', MS, '+ m * k * grand**2', '+ n * k * grand**2',
     ROBUST_TESTS),
    ('bootstrap-t quantiles swapped', MS, 'np.expm1(psi - t_hi * se)', 'np.expm1(psi - t_lo * se)', ROBUST_TESTS),
    ('not studentised (basic bootstrap)', MS, ') / _jackknife_se(yb)', ') / se[(..., *extra)]', ROBUST_TESTS),
    ('bootstrap-t at the exact level', MS, 'tail = (1 - boot_level) / 2', 'tail = (1 - level) / 2', ROBUST_TESTS),
    ('join: the larger lower end', MS, 'return np.fmin(e_lo, b_lo), np.fmax(e_hi, b_hi)',
     'return np.fmax(e_lo, b_lo), np.fmax(e_hi, b_hi)', ROBUST_TESTS),
    ('simulations of the robust part with the exact interval', MR,
     'lo, hi = _simulated_snr(mem, s * mem.sigma, n, sims, rng, robust)',
     'lo, hi = _simulated_snr(mem, s * mem.sigma, n, sims, rng)', ROBUST_TESTS),
    ('C1 reads the exact interval', C1, 'sims,\n                             d["tables"][checkpoint]),', 'sims),',
     ROBUST_TESTS),
    ('drawn tables: resampled rows without sqrt(n / (n - 1))', MS, 'rows = resid * math.sqrt(n0 / (n0 - 1))',
     'rows = resid', TABLE_TESTS),
    ('drawn tables: normal rows over sqrt(n0)', MS, '@ resid / math.sqrt(n0 - 1)', '@ resid / math.sqrt(n0)',
     TABLE_TESTS),
    ('drawn tables: t rows with 5 df', MS, 'rng.chisquare(3, (sims, n, 1))', 'rng.chisquare(5, (sims, n, 1))',
     TABLE_TESTS),
    ('drawn tables: the slope added, not moved', MS, 'means = means + (slope - slopes(means, x)) * c',
     'means = means + slope * c', TABLE_TESTS),
    ('oc_mean: noise ignored', MR, 'drawn = table.simulate(slope, n, sims, noise, rng)',
     'drawn = table.simulate(slope, n, sims, "normal", rng)', TABLE_TESTS),
    ('slope values: first two cells only', MS, 'out.append(float(np.polyfit(x[ok], row[ok], 1)[0]))',
     'out.append(float(np.polyfit(x[ok][:2], row[ok][:2], 1)[0]))', TABLE_TESTS),
]]

CD = 'numerics/metrics/clock_direction.py'  # C7's direction test (issue 27 item 1)
C7_TESTS = ['tests/test_clock_direction.py', 'tests/test_c7_clocks_collapse_the_spreads.py']
MUTANTS += [(f'C7: {name}', CD, old, new, C7_TESTS) for name, old, new in [
    ('wrap without the shift',
     'return 90.0 - np.mod(90.0 - np.asarray(theta, dtype=float), 180.0)',
     'return np.mod(np.asarray(theta, dtype=float), 180.0)'),
    ('bound a third of the way',
     'return min(deciding) / 2 if deciding else math.nan',
     'return min(deciding) / 3 if deciding else math.nan'),
    ('no sqrt(n / (n - 1))',
     '* sd * math.sqrt(n / (n - 1))',
     '* sd'),
    ('z instead of t',
     'half = t.ppf(1 - (1 - level) / 2, n - 1)',
     'half = t.ppf(1 - (1 - level) / 2, 10**6)'),
    ('disagrees without the half turn',
     'misses = ((lo > bound) & (hi < 180 - bound)) | ((hi < -bound) & (lo > bound - 180))',
     'misses = (lo > bound) | (hi < -bound)'),
    ('no clip before the logit',
     'y = np.clip(np.asarray(y, dtype=float), CLIP, 1 - CLIP)',
     'y = np.asarray(y, dtype=float)'),
    ('tie bug back',
     'logs = np.round(logs, 9)',
     'logs = logs'),
    ('resampled rows without the variance factor',
     'rows = (y - y.mean(0)) * math.sqrt(len(y) / (len(y) - 1))',
     'rows = (y - y.mean(0))'),
    ('near worlds on the wrong side',
     'World(f"{side * bound / NEAR:+.3g} deg", side * bound / NEAR, True)',
     'World(f"{side * bound / NEAR:+.3g} deg", side * bound * NEAR, True)'),
    ('coverage without the half turns',
     'for turn in (-180.0, 0.0, 180.0):',
     'for turn in (0.0,):'),
    ('plane angle from the wrong components',
     'return _wrap(np.degrees(np.arctan2(g[..., 1], g[..., 0])))',
     'return _wrap(np.degrees(np.arctan2(g[..., 0], g[..., 1])))'),
    ('contained threshold 10 degrees',
     'CONTAINED = 1.0',
     'CONTAINED = 10.0'),
    ('level pick the widest',
     'pick = next((j for j, c in enumerate(worst_cover) if c >= 0.95 - tol), len(levels) - 1)',
     'pick = len(levels) - 1'),
    ('seeds needed never says unreachable',
     '        if n >= 4 * start and last.wrong',
     '        if False and last.wrong'),
]]


def main() -> int:
    chosen = sys.argv[1:]  # optional: only the mutants whose names contain one of these words
    survived = 0
    for name, path, old, new, tests in MUTANTS:
        if chosen and not any(word in name for word in chosen):
            continue
        src = open(path).read()
        assert src.count(old) == 1, (name, src.count(old))
        open(path, "w").write(src.replace(old, new))
        try:
            r = subprocess.run([sys.executable, "-m", "pytest", "-q", "-x", "-p", "no:cacheprovider", *tests],
                               capture_output=True, text=True, env=dict(os.environ))
            failed = [line for line in r.stdout.splitlines() if line.startswith("FAILED")]
            survived += r.returncode == 0
            print(f"{name}: {'KILLED' if r.returncode else 'SURVIVED'} {failed[:1]}", flush=True)
        finally:
            open(path, "w").write(src)
    return 1 if survived else 0


if __name__ == "__main__":
    sys.exit(main())
