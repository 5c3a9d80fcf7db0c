#!/usr/bin/env python3
"""What a round's noise is made of: reads the results of compare runs (verdict-stability.sh's
OUT/run-1 .. run-K, or any compare output directories) and splits the spread of each engine's
rounds into the parts that could be removed.

For each step and engine (the spread is the standard deviation of the log of a round's TPS, so
0.10 is about ±10%):
  between   the spread of the rounds' TPS around the engine's mean in that run
  within    the sampling noise of one window: the spread of its per-second TPS over sqrt(seconds);
            what a longer window could remove
Then, per pair of engines, the spread of the log ratio of rounds run together against the spread
two independent rounds would have: what pairing the engines within a round already cancels. Then
the round's position in the rotated engine order, the insert step as the last step on its server
(the suite's rounds) against the only step on a fresh server (added rounds), and how much of each
step's spread the machine's steal and others' CPU explain (r^2), with the spread of the rounds
under 5% steal + others beside it.

Usage: bench/round-noise.py DIR [DIR...]   (each DIR holds results/*.json, or is a parent of such)
"""
import collections
import glob
import json
import math
import os
import statistics as st
import sys


def runs_under(paths):
    out = []
    for p in paths:
        if os.path.isdir(os.path.join(p, "results")):
            out.append(p)
        else:
            out += sorted(d for d in glob.glob(os.path.join(p, "*")) if os.path.isdir(os.path.join(d, "results")))
    return out


def load(run):
    """One compare's plain rounds: complete, without a label or a flipped knob."""
    rows = []
    for f in glob.glob(os.path.join(run, "results", "*.json")):
        d = json.load(open(f))
        if not d.get("complete") or d.get("label") or d.get("flipped") or not d.get("tps"):
            continue
        e = d["engine"]
        version = next((t for t in e["version"].replace("-", " ").split() if t[:1].isdigit()), e["version"])
        name = e.get("name") or "%s@%s" % (e["kind"], version)
        m = d.get("machine") or {}
        rows.append(dict(engine=name, step=d["workload"]["name"], round=int(f.rsplit("-", 1)[1][:-5]),
                         started=d["started_at"], tps=d["tps"], secs=[i["tps"] for i in d.get("intervals") or [] if i.get("tps", 0) > 0],
                         steal=m.get("steal_pct_mean", 0), others=m.get("others_cpu_pct_mean", 0)))
    first = collections.defaultdict(dict)  # round -> engine -> its first start: the round's order
    for r in rows:
        f = first[r["round"]]
        f[r["engine"]] = min(f.get(r["engine"], r["started"]), r["started"])
    for r in rows:
        order = sorted(first[r["round"]], key=first[r["round"]].get)
        r["position"] = order.index(r["engine"])
    return rows


def corr(pairs):
    xs, ys = [a for a, _ in pairs], [b for _, b in pairs]
    if len(pairs) < 3 or st.pstdev(xs) == 0 or st.pstdev(ys) == 0:
        return 0.0
    mx, my = st.mean(xs), st.mean(ys)
    return sum((a - mx) * (b - my) for a, b in pairs) / len(pairs) / (st.pstdev(xs) * st.pstdev(ys))


def main(paths):
    runs = runs_under(paths)
    if not runs:
        sys.exit("round-noise: no results/*.json under %s: give compare output directories" % " ".join(paths))
    spread = collections.defaultdict(list)
    ratio = collections.defaultdict(list)
    position = collections.defaultdict(list)
    fresh = collections.defaultdict(list)
    machine = collections.defaultdict(list)
    for run in runs:
        by = collections.defaultdict(dict)
        for r in load(run):
            by[(r["step"], r["engine"])][r["round"]] = r
        for (step, eng), rounds in by.items():
            if len(rounds) < 3:
                continue
            logs = {i: math.log(r["tps"]) for i, r in rounds.items()}
            mean = st.mean(logs.values())
            within = [st.stdev([math.log(s) for s in r["secs"]]) / math.sqrt(len(r["secs"])) for r in rounds.values() if len(r["secs"]) > 1]
            spread[(step, eng)].append((st.stdev(logs.values()), st.mean(within) if within else float("nan"), len(rounds)))
            for i, r in rounds.items():
                dev = logs[i] - mean
                position[(step, r["position"])].append(dev)
                machine[step].append((r["steal"], r["others"], dev))
                if step == "oltp_insert":
                    fresh["added rounds (only step on a fresh server)" if i > 5 else "suite rounds (last step on its server)"].append(dev)
        engines = sorted({e for _, e in by})
        for step in sorted({s for s, _ in by}):
            for a in range(len(engines)):
                for b in range(a + 1, len(engines)):
                    ra, rb = by.get((step, engines[a]), {}), by.get((step, engines[b]), {})
                    both = sorted(set(ra) & set(rb))
                    if len(both) < 3:
                        continue
                    la = [math.log(ra[i]["tps"]) for i in both]
                    lb = [math.log(rb[i]["tps"]) for i in both]
                    ratio[step].append((st.stdev([x - y for x, y in zip(la, lb)]), math.hypot(st.stdev(la), st.stdev(lb))))
    print("%d runs: %s\n" % (len(runs), ", ".join(os.path.basename(r) for r in runs)))
    print("%-18s %-18s %8s %8s  rounds per run" % ("step", "engine", "between", "within"))
    for (step, eng), v in sorted(spread.items()):
        print("%-18s %-18s %8.3f %8.3f  %s" % (step, eng, st.mean(x[0] for x in v), st.mean(x[1] for x in v), ",".join(str(x[2]) for x in v)))
    print("\n%-18s %8s %10s  (log ratio of two engines' rounds)" % ("step", "paired", "unpaired"))
    for step, v in sorted(ratio.items()):
        print("%-18s %8.3f %10.3f" % (step, st.mean(x[0] for x in v), st.mean(x[1] for x in v)))
    print("\nposition in the round's engine order: mean log deviation (rounds)")
    for step in sorted({s for s, _ in position}):
        print("%-18s %s" % (step, "  ".join("%d: %+.3f (%d)" % (p, st.mean(position[(step, p)]), len(position[(step, p)]))
                                             for p in sorted(q for s, q in position if s == step))))
    if fresh:
        print("\noltp_insert: mean log deviation, spread (rounds)")
        for k, v in sorted(fresh.items()):
            print("  %-46s %+.3f  %.3f  (%d)" % (k, st.mean(v), st.stdev(v), len(v)))
    print("\n%-18s %7s %7s %12s %10s %10s  %s" % ("step", "r steal", "r other", "r^2 both", "spread", "<5% only", "max steal"))
    for step, v in sorted(machine.items()):
        both = corr([(s + o, d) for s, o, d in v])
        quiet = [d for s, o, d in v if s + o < 5]
        print("%-18s %+7.2f %+7.2f %12.2f %10.3f %10s  %.1f%%" % (step, corr([(s, d) for s, _, d in v]), corr([(o, d) for _, o, d in v]),
                                                             both * both, st.pstdev([d for *_, d in v]),
                                                             "%.3f (%d)" % (st.pstdev(quiet), len(quiet)) if len(quiet) > 2 else "-", max(s for s, *_ in v)))


if __name__ == "__main__":
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    main(sys.argv[1:])
