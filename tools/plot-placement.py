#!/usr/bin/python3
"""Plots gte_simulate's allocation-ratio curves (--curve CSV) and per-size metrics (--csv) for
docs/placement-quality.md: one panel per scenario, the mean over seeds per chooser.

    tools/plot-placement.py CURVE.csv METRICS.csv OUT_PREFIX

writes OUT_PREFIX-allocation.png and OUT_PREFIX-links.png, and OUT_PREFIX-mig.png when the run
had MIG pods. Needs python3-matplotlib (Debian).
"""
import csv
import sys
from collections import defaultdict

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402


def mean(values):
    return sum(values) / len(values) if values else float("nan")


def read_curves(path):
    # scenario -> chooser -> arrived -> [allocated per seed]
    curves = defaultdict(lambda: defaultdict(lambda: defaultdict(list)))
    with open(path, newline="") as f:
        for row in csv.DictReader(f):
            curves[row["scenario"]][row["chooser"]][int(row["arrived_percent"])].append(
                float(row["allocated_percent"]))
    return curves


def read_metrics(path):
    # scenario -> chooser -> metric -> [value per seed]
    metrics = defaultdict(lambda: defaultdict(lambda: defaultdict(list)))
    with open(path, newline="") as f:
        for row in csv.DictReader(f):
            metrics[row["scenario"]][row["chooser"]][row["metric"]].append(float(row["value"]))
    return metrics


def plot_allocation(curves, out):
    fig, axes = plt.subplots(1, len(curves), figsize=(6 * len(curves), 4.5), squeeze=False)
    for ax, (scenario, by_chooser) in zip(axes[0], curves.items()):
        for chooser, points in by_chooser.items():
            xs = sorted(points)
            ax.plot(xs, [mean(points[x]) for x in xs], label=chooser)
        ax.plot([0, 100, 130], [0, 100, 100], color="grey", linestyle=":", label="ideal")
        ax.set_title(scenario, fontsize=9)
        ax.set_xlabel("arrived GPU demand, % of capacity")
        ax.set_ylabel("allocated GPUs, % of capacity")
        ax.grid(True, alpha=0.3)
        ax.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(out, dpi=90)


def plot_links(metrics, out):
    names = [("k2.missed", "2-GPU missed %"), ("k4.missed", "4-GPU missed %"),
             ("k8.first_failure", "first 8-GPU failure, % arrived")]
    fig, axes = plt.subplots(len(metrics), len(names), figsize=(15, 3.6 * len(metrics)),
                             squeeze=False)
    for row, (scenario, by_chooser) in zip(axes, metrics.items()):
        choosers = list(by_chooser)
        for ax, (metric, title) in zip(row, names):
            values = [mean([v for v in by_chooser[c][metric] if v >= 0]) for c in choosers]
            ax.barh(choosers, values)
            ax.set_title(f"{title}\n{scenario}", fontsize=8)
            ax.tick_params(labelsize=7)
            ax.grid(True, axis="x", alpha=0.3)
    fig.tight_layout()
    fig.savefig(out, dpi=90)


def plot_mig(metrics, out):
    """MIG pods per chooser: accepted, first failure, trap and invalid rates, slices used."""
    mig = {s: c for s, c in metrics.items()
           if any("mig.pods" in by_metric for by_metric in c.values())}
    if not mig:
        return
    names = [("mig.accepted", "MIG pods accepted %"),
             ("mig.first_failure", "first MIG failure, % arrived"),
             ("mig.trap_rate", "failed, slice counts added up, % of MIG pods"),
             ("invalid_rate", "invalid placements, % of MIG pods"),
             ("mig.slice_util", "MIG slices used %")]
    fig, axes = plt.subplots(len(mig), len(names), figsize=(20, 3.6 * len(mig)), squeeze=False)
    for row, (scenario, by_chooser) in zip(axes, mig.items()):
        choosers = list(by_chooser)
        for c in choosers:
            by_metric = by_chooser[c]
            by_metric["invalid_rate"] = [100 * i / p if p else 0.0 for i, p in
                                         zip(by_metric["mig.invalid"], by_metric["mig.pods"])]
        for ax, (metric, title) in zip(row, names):
            values = [mean([v for v in by_chooser[c][metric] if v >= 0]) for c in choosers]
            ax.barh(choosers, values)
            ax.set_title(f"{title}\n{scenario}", fontsize=8)
            ax.tick_params(labelsize=7)
            ax.grid(True, axis="x", alpha=0.3)
    fig.tight_layout()
    fig.savefig(out, dpi=90)


def main():
    if len(sys.argv) != 4:
        sys.exit(__doc__)
    curve_path, metrics_path, prefix = sys.argv[1:]
    plot_allocation(read_curves(curve_path), prefix + "-allocation.png")
    metrics = read_metrics(metrics_path)
    plot_links(metrics, prefix + "-links.png")
    plot_mig(metrics, prefix + "-mig.png")


if __name__ == "__main__":
    main()
