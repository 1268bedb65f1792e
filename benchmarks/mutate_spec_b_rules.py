"""Hand-picked mutants of Spec B's verdict rules (issue 19): each is applied to the source, the
named tests run, and the source restored; every mutant must fail a test.  Run from the repository
root: ``python benchmarks/mutate_spec_b_rules.py`` (a few minutes on 2 cores; results in
benchmarks/RESULTS.md, "Mutations of the Spec B rules")."""

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


def main() -> int:
    survived = 0
    for name, path, old, new, tests in MUTANTS:
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
