#!/usr/bin/python3
"""check-budgets.py: the experiments' time budgets add up to what a whole run may take.

Every experiment declares `.budget_s = { quick, full, soak }` (kernel/exp/experiment.h);
the harness cuts an experiment at its budget. With boot and calibration on top, a run that
has every experiment cut must still end within 5 minutes (quick) and 30 minutes (full) on
the slowest machine ticklab runs on (nested KVM), so the sums must stay at or under
QUICK_S and FULL_S. Also checked: every experiment in the registry declares a budget, each
positive and non-decreasing from quick to soak.

Prints one line per problem, then `budgets: N passed, N failed`. Exit 1 on any problem.
"""
import os
import re
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
QUICK_S, FULL_S = 270, 1670
BUDGET = re.compile(r"\.budget_s\s*=\s*\{\s*(\d+)\s*,\s*(\d+)\s*,\s*(\d+)\s*\}")
DEFN = re.compile(r"const struct experiment (exp_\w+)\s*=")


def main():
    exp_dir = os.path.join(ROOT, "kernel", "exp")
    budgets, problems, checks = {}, [], 0
    for name in sorted(os.listdir(exp_dir)):
        if not name.endswith(".c"):
            continue
        text = open(os.path.join(exp_dir, name)).read()
        for m in DEFN.finditer(text):
            body = text[m.end():text.find("};", m.end())]
            b = BUDGET.search(body)
            checks += 1
            if not b:
                problems.append("kernel/exp/%s: %s declares no .budget_s" % (name, m.group(1)))
                continue
            q, f, s = (int(x) for x in b.groups())
            if not (0 < q <= f <= s):
                problems.append("kernel/exp/%s: %s budget %d/%d/%d s is not positive and "
                                "non-decreasing" % (name, m.group(1), q, f, s))
            budgets[m.group(1)] = (q, f)
    registry = open(os.path.join(exp_dir, "registry.c")).read()
    listed = set(re.findall(r"&(exp_\w+)", registry))
    checks += 1
    if not listed or listed - set(budgets):
        problems.append("kernel/exp/registry.c: experiments without a budget: %s"
                        % ", ".join(sorted(listed - set(budgets))) or "none listed")
    for i, (label, limit) in enumerate((("quick", QUICK_S), ("full", FULL_S))):
        total = sum(v[i] for k, v in budgets.items() if k in listed)
        checks += 1
        if total > limit:
            problems.append("the %s budgets add up to %d s, over %d s" % (label, total, limit))
        else:
            print("  %s: %d experiments, budgets add up to %d s (at most %d)"
                  % (label, len(listed), total, limit))
    for p in problems:
        print(p)
    print("budgets: %d passed, %d failed" % (checks - len(problems), len(problems)))
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
