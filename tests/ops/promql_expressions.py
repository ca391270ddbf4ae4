"""Collects every PromQL expression of the Grafana dashboard and of the rendered PrometheusRule.

Writes them as recording rules into a rules file (so `promtool check rules` parses each one) and
fails when an expression names a gpu_topology_extender_* metric that the scrape does not export.
Usage: promql_expressions.py DASHBOARD.json RULE.yaml OUT_RULES.yaml EXPORTED_NAMES.txt
"""
import json
import re
import sys

import yaml

# Grafana variables, replaced by values of the right type so that the expression parses.
GRAFANA_VARIABLES = {
    "$__rate_interval": "5m",
    "$__interval": "1m",
    "$__range": "1h",
    "${job}": "gte",
    "$job": "gte",
    "${instance}": "x",
    "$instance": "x",
    "${pool}": "x",
    "$pool": "x",
}
METRIC = re.compile(r"\bgpu_topology_extender_[a-z0-9_]+")


def dashboard_expressions(path):
    with open(path, encoding="utf-8") as f:
        dashboard = json.load(f)
    found = []

    def walk(node):
        if isinstance(node, dict):
            if isinstance(node.get("expr"), str) and node["expr"].strip():
                found.append(node["expr"])
            for value in node.values():
                walk(value)
        elif isinstance(node, list):
            for value in node:
                walk(value)

    walk(dashboard)
    return found


def rule_expressions(path):
    with open(path, encoding="utf-8") as f:
        docs = [d for d in yaml.safe_load_all(f) if d]
    return [r["expr"] for d in docs for g in d["spec"]["groups"] for r in g["rules"]]


def main():
    dashboard, rule, out, exported_path = sys.argv[1:5]
    exprs = dashboard_expressions(dashboard)
    if not exprs:
        sys.exit(f"{dashboard}: no expressions found")
    exprs += rule_expressions(rule)
    with open(exported_path, encoding="utf-8") as f:
        exported = {line.strip() for line in f if line.strip()}
    missing = set()
    rules = []
    for i, expr in enumerate(exprs):
        for var, value in GRAFANA_VARIABLES.items():
            expr = expr.replace(var, value)
        if "$" in expr:
            sys.exit(f"unknown Grafana variable in: {expr}")
        missing |= {m for m in METRIC.findall(expr) if m not in exported}
        rules.append({"record": f"check:expr_{i}", "expr": expr})
    if missing:
        sys.exit("not exported by the extender: " + ", ".join(sorted(missing)))
    with open(out, "w", encoding="utf-8") as f:
        yaml.safe_dump({"groups": [{"name": "expressions", "rules": rules}]}, f)
    print(f"{len(exprs)} expressions checked")


main()
