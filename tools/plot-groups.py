#!/usr/bin/python3
"""Plots gte_simulate --mode groups metrics (--csv) for docs/placement-quality.md#groups: per
offered load (the scenario name ends in "load X"), the mean over seeds per chooser with the
standard deviation as error bars.

    tools/plot-groups.py METRICS.csv OUT.svg

Needs python3-matplotlib (Debian). The SVG is deterministic (no date, fixed ids): rerunning on the
same CSV gives the same file.
"""
import csv
import math
import re
import sys
from collections import defaultdict

import matplotlib

matplotlib.use("Agg")
matplotlib.rcParams["svg.hashsalt"] = "gte-groups"
matplotlib.rcParams["svg.fonttype"] = "none"
import matplotlib.pyplot as plt  # noqa: E402

PANELS = [
    ("clique.whole_when_fit", "GB200 groups inside one clique,\n% of those one clique could hold"),
    ("clique.refused_room_rate", "GB200 groups refused while the pool had room,\n% of GB200 groups"),
    ("util", "GPUs allocated, % of capacity"),
    ("block.whole_when_fit", "HGX groups inside one rack,\n% of those one rack could hold"),
    ("block.split_rate", "HGX groups spread over 2+ racks,\n% of HGX groups placed"),
    ("single.accepted", "single pods' GPUs placed, % asked"),
]


def read(path):
    # chooser -> metric -> load -> [value per seed]
    data = defaultdict(lambda: defaultdict(lambda: defaultdict(list)))
    with open(path, newline="") as f:
        for row in csv.DictReader(f):
            load = re.search(r"load ([0-9.]+)$", row["scenario"])
            value = float(row["value"])
            if load and value >= 0:
                data[row["chooser"]][row["metric"]][float(load.group(1))].append(value)
    return data


def stats(values):
    m = sum(values) / len(values)
    return m, math.sqrt(sum((v - m) ** 2 for v in values) / len(values))


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    data = read(sys.argv[1])
    fig, axes = plt.subplots(2, 3, figsize=(13, 7))
    for ax, (metric, title) in zip(axes.flat, PANELS):
        for chooser, metrics in data.items():
            loads = sorted(metrics[metric])
            if not loads:
                continue
            points = [stats(metrics[metric][x]) for x in loads]
            ax.errorbar(loads, [p[0] for p in points], yerr=[p[1] for p in points], label=chooser,
                        marker="o", markersize=3, capsize=3)
        ax.set_title(title, fontsize=9)
        ax.set_xlabel("offered GPU load, share of capacity", fontsize=8)
        ax.tick_params(labelsize=7)
        ax.grid(True, alpha=0.3)
    axes.flat[0].legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(sys.argv[2], metadata={"Date": None})


if __name__ == "__main__":
    main()
