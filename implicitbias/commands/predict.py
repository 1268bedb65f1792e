"""``implicitbias predict``: a training recipe's forgetting clocks and the spread across sigma_w that
the calibrated clock law predicts for it (Spec B, C7).

The law ships with the package (``validation/clock_law.json``, written by
``benchmarks/calibrate_clock_law.py`` from the toy tier and its clock-collapse grid); it says
which experiments calibrated it.  Outside the calibrated range of the recipe's family, or for an
optimiser that did not calibrate it, no spread is printed, only why (no extrapolation).
"""

from __future__ import annotations

from implicitbias.commands.clocks import add_recipe, recipe_clocks


def register(sub) -> None:
    p = sub.add_parser("predict", help="a recipe's forgetting clocks and the spread the calibrated clock law predicts")
    add_recipe(p)
    p.add_argument("--law", default=None, help="calibrated law file (default: the one shipped with the package)")
    p.set_defaults(func=run)


def run(args) -> int:
    from implicitbias.validation.clock_law import LAW_FILE, load_law, predict_spread

    clocks, line = recipe_clocks(args)
    law = load_law(LAW_FILE if args.law is None else args.law)
    total = clocks.total
    p = predict_spread(law, args.optimizer, clocks.weight_decay, total[clocks.governing])
    if args.json:
        from implicitbias.commands import emit

        emit(args.json, None, recipe=line, epochs=clocks.epochs, steps=clocks.epochs * clocks.steps_per_epoch, total=total,
             governing=clocks.governing, law=law["calibrated_on"], prediction=p)
        return 0
    print(f"recipe: {line}, {clocks.epochs} epochs ({clocks.epochs * clocks.steps_per_epoch} steps)")
    print("clocks at the end of training: " + ", ".join(f"{c} = {v:.4g}" for c, v in total.items()))
    print(f"governing clock: {clocks.governing} (family {p['family']})")
    print(f"law: {law['calibrated_on']}")
    if p["status"] == "uncalibrated":
        known = "; ".join(f"{f}: {', '.join(o)}" for f, o in p["calibrated"].items())
        print(f"prediction: none; the law has no calibration for {args.optimizer} in family {p['family']} "
              f"(calibrated: {known})")
        return 0
    lo, hi = p["range"]
    where = (f"calibrated on {p['n_groups']} {p['family']} groups with {p['clock']} in [{lo:.4g}, {hi:.4g}]; "
             f"C7 on this family: {p['verdict']}")
    if p["status"] != "inside":
        side = "below the smallest" if p["status"] == "below" else "above the largest"
        print(f"prediction: none; {clocks.governing} = {total[clocks.governing]:.4g} is outside the calibrated range, "
              f"{side} calibrated value ({where}); the law is not extrapolated")
        return 0
    b0, b1 = p["band"]
    print(f"predicted end-of-training spread across sigma_w: {p['spread']:.2f} points, band [{b0:.2f}, {b1:.2f}] "
          f"({p['band_quantile']:.0%} of held-out errors fell within it; {where})")
    print("this is the calibrating setting's law at this clock: for another architecture or data set it is a "
          "transfer, not a measurement")
    return 0
