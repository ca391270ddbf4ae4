#!/usr/bin/env bash
# The chart's PrometheusRule, rendered as a user would get it, checked by promtool: every rule
# parses (`promtool check rules`) and each alert fires on the condition it is meant for and stays
# quiet otherwise (`promtool test rules` on alerts_test.yaml).
source "$(dirname "$0")/ops_lib.sh"
need "$helm_bin"
need promtool

render "$work/rule.yaml" -f "$ops_dir/values-all-on.yaml" --show-only templates/prometheusrule.yaml
python3 "$ops_dir/prometheusrule_groups.py" "$work/rule.yaml" "$work/rules.yaml" ||
  fail "could not extract spec.groups from the rendered PrometheusRule"
promtool check rules "$work/rules.yaml" || fail "promtool check rules"
cp "$ops_dir/alerts_test.yaml" "$work/"
(cd "$work" && promtool test rules alerts_test.yaml) || fail "promtool test rules"
echo "alerts: rules parse and every alert unit test passes"
