"""Writes the spec.groups of a rendered PrometheusRule as a plain Prometheus rules file."""
import sys

import yaml

with open(sys.argv[1], encoding="utf-8") as f:
    docs = [d for d in yaml.safe_load_all(f) if d]
rules = [d for d in docs if d.get("kind") == "PrometheusRule"]
if len(rules) != 1:
    sys.exit(f"expected one PrometheusRule, found {len(rules)}")
with open(sys.argv[2], "w", encoding="utf-8") as f:
    yaml.safe_dump({"groups": rules[0]["spec"]["groups"]}, f, sort_keys=False)
