#!/usr/bin/env bash
# helm lint --strict and helm template, with the default values and with every option on. Also
# checks what a user would notice in the rendered manifests: the objects exist, and every
# optional object appears when its switch is on.
source "$(dirname "$0")/ops_lib.sh"
need "$helm_bin"

"$helm_bin" lint --strict "$chart" || fail "helm lint --strict (default values)"
"$helm_bin" lint --strict "$chart" -f "$ops_dir/values-all-on.yaml" || fail "helm lint --strict (all on)"

render "$work/default.yaml"
render "$work/all-on.yaml" -f "$ops_dir/values-all-on.yaml"

kinds() { grep -E '^kind: ' "$1" | sort | uniq | tr '\n' ' '; }
for kind in Deployment DaemonSet Service ServiceAccount ClusterRole ClusterRoleBinding ConfigMap; do
  grep -qx "kind: $kind" "$work/default.yaml" || fail "default render lacks a $kind: $(kinds "$work/default.yaml")"
done
for kind in PrometheusRule ServiceMonitor; do
  grep -qx "kind: $kind" "$work/default.yaml" && fail "default render has a $kind although it is off by default"
  grep -qx "kind: $kind" "$work/all-on.yaml" || fail "all-on render lacks a $kind"
done
# A typo in a value must be refused, not silently ignored (values.schema.json).
if "$helm_bin" template gte "$chart" --set extender.thredas=2 >/dev/null 2>&1; then
  fail "helm template accepted the unknown value extender.thredas"
fi
# Every policy section an admin may set in values reaches the policy ConfigMap (the schema once
# refused groups), and a value the extender would refuse is refused at install.
policy_out=$("$helm_bin" template gte "$chart" \
  --set-json 'policy.groups={"holdTtl":"90s","levels":[{"label":"cloud.example.com/rack","mode":"required"}]}' \
  --set policy.sharing.defaultIsolation=exclusive --set policy.scarceSets.points=4) ||
  fail "policy.groups, policy.sharing and policy.scarceSets must render"
grep -q 'points: 4' <<<"$policy_out" || fail "policy.scarceSets not in the ConfigMap"
if "$helm_bin" template gte "$chart" --set policy.groups.sameModel=required >/dev/null 2>&1; then
  fail "schema accepted policy.groups.sameModel=required (the extender refuses it)"
fi
if "$helm_bin" template gte "$chart" --set policy.scarceSets.points=101 >/dev/null 2>&1; then
  fail "schema accepted policy.scarceSets.points=101 (the extender refuses it)"
fi
grep -q 'label: cloud.example.com/rack' <<<"$policy_out" || fail "policy.groups.levels not in the ConfigMap"
grep -q 'defaultIsolation: exclusive' <<<"$policy_out" || fail "policy.sharing not in the ConfigMap"
if "$helm_bin" template gte "$chart" --set policy.sharing.defaultIsolation=private >/dev/null 2>&1; then
  fail "schema accepted policy.sharing.defaultIsolation=private"
fi
if "$helm_bin" template gte "$chart" --set extender.port=notaport >/dev/null 2>&1; then
  fail "helm template accepted extender.port=notaport"
fi
# bind with ignorable would let kube-scheduler bind past the extender's refusal: refused at render.
if out=$("$helm_bin" template gte "$chart" --set scheduler.extender.ignorable=true 2>&1); then
  fail "helm template accepted scheduler.extender.ignorable=true with bind: true"
fi
grep -q 'ignorable must be false while scheduler.extender.bind is true' <<<"$out" ||
  fail "the ignorable+bind refusal does not say why: $out"
"$helm_bin" template gte "$chart" --set scheduler.extender.ignorable=true \
  --set scheduler.extender.bind=false >/dev/null || fail "ignorable without bind must render"
# The node agent is on by default and can be switched off.
if "$helm_bin" template gte "$chart" --set agent.enabled=false | grep -qx 'kind: DaemonSet'; then
  fail "agent.enabled=false still renders the agent DaemonSet"
fi
# Who may call: a NetworkPolicy by default; the verbs port admits the chart's scheduler pods.
grep -qx "kind: NetworkPolicy" "$work/default.yaml" || fail "default render lacks the NetworkPolicy"
grep -q 'app.kubernetes.io/component: scheduler' "$work/default.yaml" ||
  fail "the NetworkPolicy does not admit the chart's scheduler pods"
if "$helm_bin" template gte "$chart" --set scheduler.enabled=false >/dev/null 2>&1; then
  fail "a NetworkPolicy with no scheduler peers rendered (it would block every caller)"
fi
# Explain is served by default; extender.explain=false turns it off.
grep -q -- '--disable-explain' "$work/all-on.yaml" || fail "all-on render lacks --disable-explain"
if grep -q -- '--disable-explain' "$work/default.yaml"; then
  fail "default render must serve explain"
fi
# The same for whatif and nodes; the what-if's bounds reach the flags.
for flag in --disable-whatif --disable-nodes --whatif-max-pods=50 --whatif-deadline=500ms; do
  grep -q -- "- $flag\$" "$work/all-on.yaml" || fail "all-on render lacks $flag"
done
for flag in --disable-whatif --disable-nodes; do
  if grep -q -- "$flag" "$work/default.yaml"; then fail "default render must not pass $flag"; fi
done
grep -q -- '- --whatif-max-pods=1000$' "$work/default.yaml" || fail "default render lacks --whatif-max-pods=1000"
# The fragmentation gauges group nodes by the GPU model unless a pool label is given.
grep -q -- '--health-pool-label=cloud.google.com/gke-nodepool' "$work/all-on.yaml" ||
  fail "all-on render lacks --health-pool-label"
if grep -q -- '--health-pool-label' "$work/default.yaml"; then
  fail "default render must group by GPU model (no --health-pool-label)"
fi
# The topology-health alerts render by default and can be switched off by their thresholds.
if "$helm_bin" template gte "$chart" -f "$ops_dir/values-all-on.yaml" --set metrics.alerts.regretRatio=0 \
  --set metrics.alerts.pendingEightGpuPods=0 | grep -Eq 'GpuTopologyExtender(PlacementRegret|NoFreeNvlink8Set)'; then
  fail "regretRatio=0 and pendingEightGpuPods=0 still render the topology-health alerts"
fi
# Client certificates: the extender requires them, the scheduler presents them, probes use the
# plain metrics port; without a metrics port the chart refuses (kubelet has no certificate).
grep -q -- '--tls-client-ca=' "$work/all-on.yaml" || fail "all-on render lacks --tls-client-ca"
grep -q 'certFile: /etc/gpu-topology-scheduler/client-tls/tls.crt' "$work/all-on.yaml" ||
  fail "all-on scheduler config lacks the client certificate"
if "$helm_bin" template gte "$chart" -f "$ops_dir/values-all-on.yaml" --set extender.metricsPort= \
  >/dev/null 2>&1; then
  fail "tls.clientAuth without a metrics port rendered (kubelet probes would fail)"
fi
# Graceful shutdown: preStop sleep, then --drain-period, then --shutdown-grace, all inside the
# termination grace period.
grep -q -- '--drain-period=5s' "$work/default.yaml" || fail "default render lacks --drain-period"
grep -q -- '--shutdown-grace=20s' "$work/default.yaml" || fail "default render lacks --shutdown-grace"
grep -q 'terminationGracePeriodSeconds: 35' "$work/default.yaml" ||
  fail "default terminationGracePeriodSeconds is not preStop 5 + drain 5 + grace 20 + 5"
grep -q 'command: \["sleep", "5"\]' "$work/default.yaml" || fail "default render lacks the preStop sleep"
if "$helm_bin" template gte "$chart" --set terminationGracePeriodSeconds=30 >/dev/null 2>&1; then
  fail "a termination grace period not above preStop + drain period + grace rendered"
fi
# In-tree packing: the scheduler profile scores NodeResourcesFit MostAllocated over the GPU
# resource too, unless the user's own pluginConfig configures NodeResourcesFit.
sched_config() { "$helm_bin" template gte "$chart" --show-only templates/scheduler-configmap.yaml "$@"; }
default_config=$(sched_config) || fail "rendering the scheduler ConfigMap"
grep -q 'type: MostAllocated' <<<"$default_config" || fail "default profile does not set MostAllocated"
grep -q -- '- name: nvidia.com/gpu' <<<"$default_config" || fail "default strategy does not weigh nvidia.com/gpu"
own=$(sched_config --set-json 'scheduler.profile={"pluginConfig":[{"name":"NodeResourcesFit","args":{"scoringStrategy":{"type":"LeastAllocated"}}}]}') ||
  fail "rendering with the user's NodeResourcesFit"
[ "$(grep -c 'name: NodeResourcesFit' <<<"$own")" = 1 ] || fail "the user's NodeResourcesFit was duplicated"
grep -q 'type: MostAllocated' <<<"$own" && fail "the chart's strategy overrode the user's NodeResourcesFit"
sched_config --set scheduler.scoringStrategy.type= | grep -q 'name: NodeResourcesFit' &&
  fail "scoringStrategy.type \"\" still renders NodeResourcesFit"
# MIG pods reach the extender with the default values: every MIG resource is managed.
grep -q -- '- name: nvidia.com/mig-3g.40gb' <<<"$default_config" ||
  fail "default managedResources lack the MIG resources"
# extender.dra: claim-only pods reach the extender (no managedResources), the extender watches the
# DRA objects (--dra) and may list and watch them; off by default.
grep -q -- '--dra$' "$work/default.yaml" && fail "default render passes --dra"
grep -q 'apiGroups: \["resource.k8s.io"\]' "$work/default.yaml" && fail "default ClusterRole grants resource.k8s.io"
dra=$("$helm_bin" template gte "$chart" --set extender.dra=true) || fail "rendering extender.dra=true"
grep -q -- '- --dra$' <<<"$dra" || fail "extender.dra=true does not pass --dra"
grep -q 'managedResources:' <<<"$dra" && fail "extender.dra=true still lists managedResources"
grep -q 'resources: \["resourceslices", "deviceclasses", "resourceclaims", "devicetaintrules"\]' <<<"$dra" ||
  fail "extender.dra=true does not grant the DRA objects"
# agent.devicePluginConfig: off by default; set, the agent reads that one ConfigMap (a Role in its
# namespace naming it) and is told which (docs/sharing.md).
grep -q -- '--device-plugin-config' "$work/default.yaml" && fail "default render passes --device-plugin-config"
dpc=$("$helm_bin" template gte "$chart" --set agent.devicePluginConfig.name=time-slicing-config \
  --set agent.devicePluginConfig.default=any) || fail "rendering agent.devicePluginConfig"
grep -q -- '- --device-plugin-config=gpu-operator/time-slicing-config$' <<<"$dpc" ||
  fail "agent.devicePluginConfig does not pass --device-plugin-config"
grep -q -- '- --device-plugin-config-default=any$' <<<"$dpc" ||
  fail "agent.devicePluginConfig.default does not pass --device-plugin-config-default"
grep -q 'resourceNames: \["time-slicing-config"\]' <<<"$dpc" ||
  fail "agent.devicePluginConfig does not grant get on that ConfigMap alone"
# Binds kube-scheduler has stopped waiting for are dropped: the deadline follows its httpTimeout.
grep -q -- '--bind-deadline=2500ms' "$work/default.yaml" ||
  fail "default render lacks --bind-deadline=2500ms (five sixths of httpTimeout 3s)"
"$helm_bin" template gte "$chart" --set scheduler.extender.httpTimeout=6s |
  grep -q -- '--bind-deadline=5000ms' || fail "httpTimeout 6s does not give --bind-deadline=5000ms"
grep -q -- '--bind-concurrency=64' "$work/default.yaml" || fail "default render lacks --bind-concurrency"
# High availability (docs/operations.md): by default the extender is a sidecar of each of the two
# leader-elected kube-scheduler pods, called on loopback, binding only while its scheduler holds
# the lease; no Deployment of its own, a PodDisruptionBudget over the scheduler pods.
grep -q 'urlPrefix: "http://127.0.0.1:8888/scheduler"' "$work/default.yaml" ||
  fail "default (sidecar) urlPrefix is not the loopback extender"
grep -q -- '- --follow-lease=gpu-system/gpu-topology-scheduler$' "$work/default.yaml" ||
  fail "default sidecar extender does not follow its scheduler's lease"
[ "$(grep -cx 'kind: Deployment' "$work/default.yaml")" = 1 ] ||
  fail "default (sidecar) render must have one Deployment (the scheduler's)"
grep -qx 'kind: PodDisruptionBudget' "$work/default.yaml" || fail "default render lacks the PodDisruptionBudget"
"$helm_bin" template gte "$chart" --set scheduler.image.tag=v1.37.2 --set scheduler.replicaCount=1 |
  grep -qx 'kind: PodDisruptionBudget' && fail "one replica still renders a PodDisruptionBudget"
if "$helm_bin" template gte "$chart" --set scheduler.leaderElection.enabled=false >/dev/null 2>&1; then
  fail "two scheduler replicas without leader election rendered (every sidecar would bind)"
fi
if out=$("$helm_bin" template gte "$chart" --set scheduler.enabled=false --set networkPolicy.enabled=false 2>&1); then
  fail "layout sidecar without the chart's scheduler rendered"
fi
grep -q 'layout sidecar runs the extender inside the chart' <<<"$out" ||
  fail "the sidecar-without-scheduler refusal does not say why: $out"
# Standalone: replicaCount extenders competing for their own Lease; the leader publishes itself in
# the selector-less Service's EndpointSlice; a Role grants exactly that.
standalone=$("$helm_bin" template gte "$chart" --namespace gpu-system --set scheduler.image.tag=v1.37.2 --set layout=standalone) ||
  fail "rendering layout=standalone"
for want in '- --leader-elect$' '- --leader-elect-lease=gpu-system/gte-gpu-topology-extender$' \
  '- --publish-endpoint=gpu-system/gte-gpu-topology-extender$' 'fieldPath: status.podIP' \
  'resources: \["leases"\]' 'resources: \["endpointslices"\]' \
  'resourceNames: \["gte-gpu-topology-extender-leader"\]' \
  'urlPrefix: "http://gte-gpu-topology-extender.gpu-system.svc:8888/scheduler"'; do
  grep -q -- "$want" <<<"$standalone" || fail "layout=standalone render lacks $want"
done
[ "$(grep -cx 'kind: Deployment' <<<"$standalone")" = 2 ] ||
  fail "layout=standalone must render the extender's and the scheduler's Deployments"
grep -q -- '--follow-lease' <<<"$standalone" && fail "layout=standalone must not follow the scheduler's lease"
# The chart's kubeVersion is the support table's: it takes the oldest release the version matrix
# tests (tests/e2e/hack/k8s-release.sh) and refuses the one before; the README's table lists every
# release of the matrix.
# shellcheck source=../e2e/hack/k8s-release.sh
source "$repo_root/tests/e2e/hack/k8s-release.sh"
read -r oldest _ <<<"$(matrix_releases)"
oldest_minor=${oldest#v1.}
oldest_minor=${oldest_minor%%.*}
"$helm_bin" template gte "$chart" --kube-version "$oldest" >/dev/null ||
  fail "the chart refuses Kubernetes $oldest, the oldest release the e2e matrix tests"
"$helm_bin" template gte "$chart" --kube-version "v1.$((oldest_minor - 1)).0" >/dev/null 2>&1 &&
  fail "the chart accepts Kubernetes 1.$((oldest_minor - 1)), older than any release the e2e matrix tests"
for release in $(matrix_releases); do
  minor=${release#v1.}
  grep -qE "^\| 1\.${minor%%.*} \($release\) \|" "$repo_root/README.md" ||
    fail "README.md's Kubernetes versions table has no row for $release (tests/e2e/hack/k8s-release.sh)"
done
echo "chart: lint --strict and template pass with default and all-on values; kubeVersion from $oldest"
