#!/usr/bin/env python3
"""Writes the seed corpora under fuzz/corpus/ from the repository's test fixtures.

The seeds are committed (the corpus replay test reads them); rerun this after changing a fixture:
    python3 fuzz/make_seeds.py
Files named finding-* are inputs a fuzz run found (each a regression input); they are kept.
Sources: tests/golden (request bodies, the golden cluster), tests/data/clusters, config/
(the shipped policy), and the inputs the unit tests of each parser use.
"""
import json
import pathlib
import shutil

import yaml

ROOT = pathlib.Path(__file__).resolve().parent.parent
CORPUS = ROOT / "fuzz" / "corpus"
VERBS = {"filter": 0, "prioritize": 1, "preempt": 2, "bind": 3}
PREFIX = "gputopo.dev/"


def reset(name):
    d = CORPUS / name
    d.mkdir(parents=True, exist_ok=True)
    for f in d.iterdir():
        if not f.name.startswith("finding-"):
            f.unlink()
    return d


def write(d, name, data):
    (d / name).write_bytes(data if isinstance(data, bytes) else data.encode())


def verbs():
    d = reset("verbs")
    for req in sorted((ROOT / "tests/golden/cases").glob("*.request.json")):
        name = req.name[: -len(".request.json")]
        if name.split("-")[0] not in VERBS:
            continue  # explain's, whatif's and nodes' own shapes: other targets
        verb = VERBS[name.split("-")[0]]
        names = 4 if "-names-" in name else 12 if "-groups-" in name else 0
        write(d, name, bytes([verb | names]) + req.read_bytes().rstrip(b"\n"))
    # A node whose labels are malformed falls back to allocatable; here a negative one.
    doc = json.loads((ROOT / "tests/golden/cases/filter-nodes-2gpu.request.json").read_text())
    for item in doc["Nodes"]["items"]:
        if item["metadata"]["name"] == "broken":
            item["status"]["allocatable"]["nvidia.com/gpu"] = "-2"
    write(d, "filter-nodes-negative-allocatable", bytes([VERBS["filter"]]) + json.dumps(doc).encode())


def whatif():
    d = reset("whatif")
    for req in sorted((ROOT / "tests/golden/cases").glob("whatif-*.request.json")):
        write(d, req.name[: -len(".request.json")], req.read_bytes().rstrip(b"\n"))
    pod = json.loads((ROOT / "tests/golden/cases/whatif-names-3x2gpu.request.json").read_text())["pod"]
    mig = json.loads(json.dumps(pod))
    mig["spec"]["containers"][0]["resources"]["limits"] = {"nvidia.com/mig-3g.40gb": "1"}
    write(d, "mig", json.dumps({"pod": mig, "count": 2}))
    numa = json.loads(json.dumps(pod))
    numa["metadata"]["annotations"] = {"gputopo.dev/numa": "single", "gputopo.dev/strategy": "spread"}
    write(d, "numa-spread", json.dumps({"pod": numa, "count": 4}))
    write(d, "group-levels", json.dumps({"pod": {"metadata": {"name": "wide", "annotations": {
        "gputopo.dev/group": "wide", "gputopo.dev/group-size": "3",
        "gputopo.dev/group-levels": "nvidia.com/gpu.clique=preferred"}},
        "spec": pod["spec"]}, "groupSize": 3}))
    write(d, "policy-shipped", json.dumps({"pod": pod, "policy": (ROOT / "config/scheduler-policy.yaml").read_text()}))
    trace = (ROOT / "tests/data/sim/synthetic-pods.csv").read_text().splitlines()
    write(d, "csv-trace", json.dumps({"csv": "\n".join(trace[:40]) + "\n"}))


def quantity():
    d = reset("quantity")
    texts = ["8", "+1", "01", "0", "-2", "100m", "1.5", ".5", "5.", "1n", "1u", "1k", "1M", "1G",
             "1T", "1P", "1E", "1E3", "2e0", "5e-3", "1.5e3", "1Ki", "1.5Gi", "1Ei", "1.5Mi",
             "0.0000000001", "-0.0000000001", "1.0000000001", "1500m", "-1500m", "80Gi",
             "9223372036854775807", "1e1000", "99999999999999999999999999999999999999"]
    for i, t in enumerate(texts):
        write(d, f"q{i:02d}", t)


def cluster_objects(kind):
    for path in [ROOT / "tests/golden/cluster.yaml", *sorted((ROOT / "tests/data/clusters").glob("*.yaml"))]:
        doc = yaml.safe_load(path.read_text())
        for item in doc["items"]:
            if item.get("kind") == kind:
                yield item


def cluster_nodes():
    return cluster_objects("Node")


def node_labels():
    d = reset("node_labels")
    for node in cluster_nodes():
        lines = []
        for k, v in node["metadata"].get("labels", {}).items():
            key = k[len(PREFIX):] if k.startswith(PREFIX) else k
            lines.append(f"{key}={v}")
        for k, v in node.get("status", {}).get("allocatable", {}).items():
            lines.append(f"@{k}={v}")
        write(d, node["metadata"]["name"], "\n".join(lines) + "\n")
    # The same DGX-1 with usage the extender adds on top of the labels.
    dgx1 = (d / "dgx1").read_text()
    write(d, "dgx1-usage", dgx1 + "!gpu=0\n!gpu=3\n!unknown=2\n")
    a100 = (d / "a100").read_text()
    write(d, "a100-mig-usage", a100 + "!mig=0,1g.10gb,6\n!mig=1,3g.40gb,4\n")
    # Failing hardware (docs/health.md): a degraded and a failed GPU, NVLink pairs degraded, down
    # and cordoned.
    write(d, "dgx1-health", dgx1.replace("health=11111111", "health=d0c11111")
          + "nvlh=d1111111111111111111101c1111\n")
    # Shared GPUs (docs/sharing.md): GFD's labels, the agent's tenants and its reading of the
    # device plugin's configuration (labels-v1 sharing).
    write(d, "sharing-time-slicing", "n=8\nnvidia.com/gpu.sharing-strategy=time-slicing\n"
          "nvidia.com/gpu.replicas=4\n@nvidia.com/gpu=32\n")
    write(d, "sharing-inconsistent", "n=8\nnvidia.com/gpu.sharing-strategy=none\n"
          "nvidia.com/gpu.replicas=4\n")
    write(d, "sharing-tenants", "v=1\nn=8\nmodel=NVIDIA-H100-80GB-HBM3\nfabric=nvsw4\n"
          "nvl=iiiiiiiiiiiiiiiiiiiiiiiiiiii\npci=SSSSSSSSSSSSSSSSSSSSSSSSSSSS\ntenants=03000z10\n"
          "nvidia.com/gpu.sharing-strategy=mps\nnvidia.com/gpu.replicas=8\n@nvidia.com/gpu=64\n")
    write(d, "sharing-agent", dgx1 + "sharing=time-slicing.4.f\ntenants=01000020\n"
          "@nvidia.com/gpu=32\n")
    write(d, "sharing-mig", a100 + "nvidia.com/mig-1g.10gb.sharing-strategy=time-slicing\n"
          "nvidia.com/mig-1g.10gb.replicas=2\nnvidia.com/mig-3g.40gb.sharing-strategy=none\n"
          "nvidia.com/mig-3g.40gb.replicas=1\n")
    # Shared MIG devices with their tenants counted (labels-v1 state 1-9), and usage on them.
    write(d, "sharing-mig-tenants", a100.replace("mig1=00f01f02u03f04f05u06f",
                                                 "mig1=00301f02u03904f05u06f")
          + "nvidia.com/mig-1g.10gb.sharing-strategy=time-slicing\n"
          "nvidia.com/mig-1g.10gb.replicas=4\n!mig=1,1g.10gb,1\n!mig=1,1g.10gb,1\n")
    write(d, "sharing-agent-beside-gfd", dgx1 + "sharing=mps.2.f\n"
          "nvidia.com/gpu.sharing-strategy=mps\nnvidia.com/gpu.replicas=2\n")


def policy_yaml():
    d = reset("policy_yaml")
    shutil.copy(ROOT / "config/scheduler-policy.yaml", d / "shipped")
    write(d, "overrides", """labelPrefix: topo.example.com/
strategy: spread
linkScores: {nvlinkPerLink: 250}
weights: {packing: 0}
unknownTopology: {allowMultiGpu: false}
wireScale: {linkFirst: false}
mig:
  dynamic: true
  products:
    - name: A30
      models: [A30]
      profiles:
        - {name: 1g.6gb, code: "0", slices: 2, starts: [0, 2, 4, 6], maxInstances: 4}
""")
    write(d, "weights", "weights: {linkQuality: 1000, numaLocality: 0, packing: 5, migFit: 7}\n")
    write(d, "groups", "groups:\n  holdTtl: 90s\n  levels:\n    - {label: cloud.example.com/rack, mode: required}\n    - {label: cloud.example.com/block, mode: ignore}\n")
    write(d, "scarce-sets-one-model", "scarceSets: {points: 0}\ngroups: {sameModel: ignore}\n")
    write(d, "health", "health: {degradedGpus: refuse, degradedLinks: ignore}\n")


def cluster_file():
    d = reset("cluster_file")
    shutil.copy(ROOT / "tests/golden/cluster.yaml", d / "golden.yaml")
    shutil.copy(ROOT / "tests/golden/groups-cluster.yaml", d / "groups.yaml")
    for path in sorted((ROOT / "tests/data/clusters").glob("*.yaml")):
        shutil.copy(path, d / path.name)
    doc = yaml.safe_load((ROOT / "tests/data/clusters/a100-pcie-bind-race.yaml").read_text())
    write(d, "bind-race.json", json.dumps(doc))
    write(d, "array.json", json.dumps(doc["items"]))
    write(d, "stream.yaml", "\n---\n".join(yaml.safe_dump(i) for i in doc["items"]))


def kubeconfig():
    d = reset("kubeconfig")
    write(d, "two-contexts", """apiVersion: v1
kind: Config
current-context: dev
clusters:
- name: prod-cluster
  cluster:
    server: https://10.0.0.1:6443/
    certificate-authority-data: Q0EtUEVN
- name: dev-cluster
  cluster:
    server: https://127.0.0.1:6443
    insecure-skip-tls-verify: true
contexts:
- name: prod
  context: {cluster: prod-cluster, user: prod-admin, namespace: ml}
- name: dev
  context: {cluster: dev-cluster, user: dev-user}
users:
- name: prod-admin
  user:
    client-certificate-data: Q0VSVC1QRU0=
    client-key-data: S0VZLVBFTQ==
- name: dev-user
  user:
    token: s3cr3t
""")
    write(d, "certs", """current-context: prod
clusters:
- name: c
  cluster: {server: "https://10.0.0.1:6443", certificate-authority: ca.crt}
contexts:
- name: prod
  context: {cluster: c, user: u}
users:
- name: u
  user: {client-certificate-data: Q0VSVC1QRU0=, client-key-data: S0VZLVBFTQ==, tokenFile: token}
""")
    write(d, "exec", """current-context: x
clusters: [{name: c, cluster: {server: "https://h"}}]
contexts: [{name: x, context: {cluster: c, user: u}}]
users: [{name: u, user: {exec: {command: aws}}}]
""")


def dra_objects():
    d = reset("dra_objects")
    for path in sorted((ROOT / "tests/data/dra").glob("*.json")):
        doc = json.loads(path.read_text())
        if doc.get("kind") == "DeviceClassList":
            for item in doc["items"]:
                write(d, "class-" + item["metadata"]["name"], json.dumps(item))
                for selector in item["spec"].get("selectors", []):
                    write(d, "cel-" + item["metadata"]["name"], selector["cel"]["expression"])
        else:
            write(d, path.stem, json.dumps(doc))
    expressions = {
        "cel-numa-in": "device.attributes['resource.kubernetes.io'].numaNode in [0, 1]",
        "cel-has": "has(device.attributes['gpu.nvidia.com'].uuid) && !device.allowMultipleAllocations",
        "cel-version": "device.attributes['gpu.nvidia.com'].driverVersion.isGreaterThan(semver('550.0.0'))",
        "cel-capacity": "device.capacity['gpu.nvidia.com'].memory.compareTo(quantity('40Gi')) >= 0",
        "cel-strings": "device.attributes['gpu.nvidia.com'].productName.startsWith('NVIDIA') || device.driver.endsWith('.com')",
        "cel-outside": "device.attributes['a'].b + 1 > 2",
    }
    for name, text in expressions.items():
        write(d, name, text)
    # Slices the allocator treats specially: counters, taints, an incomplete pool, per-device nodes.
    write(d, "slice-counters", json.dumps({"metadata": {"name": "c"}, "spec": {
        "driver": "gpu.nvidia.com", "nodeName": "n", "pool": {"name": "n", "generation": 1, "resourceSliceCount": 1},
        "sharedCounters": [{"name": "gpu-0-cs", "counters": {"memory-slice": {"value": "8"}}}]}}))
    write(d, "slice-taints", json.dumps({"metadata": {"name": "t"}, "spec": {
        "driver": "gpu.nvidia.com", "nodeName": "n", "pool": {"name": "n", "generation": 1, "resourceSliceCount": 2},
        "devices": [{"name": "gpu-0", "attributes": {"type": {"string": "gpu"}},
                     "taints": [{"key": "k", "value": "v", "effect": "NoSchedule"}],
                     "consumesCounters": [{"counterSet": "gpu-0-cs", "counters": {"memory-slice": {"value": "8"}}}]}]}}))
    write(d, "slice-per-device", json.dumps({"metadata": {"name": "p"}, "spec": {
        "driver": "gpu.nvidia.com", "perDeviceNodeSelection": True, "pool": {"name": "p", "generation": 1, "resourceSliceCount": 1},
        "devices": [{"name": "gpu-0", "nodeName": "n", "attributes": {"type": {"string": "gpu"}, "index": {"int": 0}}},
                    {"name": "gpu-1", "allNodes": True, "allowMultipleAllocations": True}]}}))
    # Consumable capacity: a shareable device with request policies, a claim asking capacity and
    # an allocated share.
    write(d, "slice-shared", json.dumps({"metadata": {"name": "sh"}, "spec": {
        "driver": "gpu.nvidia.com", "nodeName": "n", "pool": {"name": "n", "generation": 1, "resourceSliceCount": 1},
        "devices": [{"name": "gpu-0", "allowMultipleAllocations": True, "attributes": {"type": {"string": "gpu"}},
                     "capacity": {"memory": {"value": "80Gi", "requestPolicy": {
                         "default": "10Gi", "validRange": {"min": "10Gi", "max": "40Gi", "step": "5Gi"}}},
                                  "cores": {"value": "4", "requestPolicy": {"validValues": ["500m", "1", "2"]}}}}]}}))
    write(d, "claim-capacity", json.dumps({"metadata": {"name": "c", "namespace": "ns"}, "spec": {"devices": {
        "requests": [{"name": "gpu", "exactly": {"deviceClassName": "gpu.nvidia.com",
                                                 "capacity": {"requests": {"memory": "12Gi"}}}}]}},
        "status": {"allocation": {"devices": {"results": [
            {"request": "gpu", "driver": "gpu.nvidia.com", "pool": "n", "device": "gpu-0",
             "shareID": "4c1e", "consumedCapacity": {"memory": "15Gi"}}]}}}}))
    write(d, "claim-all", json.dumps({"metadata": {"name": "a", "namespace": "ns"}, "spec": {"devices": {
        "requests": [{"name": "all", "exactly": {"deviceClassName": "gpu.nvidia.com", "allocationMode": "All"}}],
        "constraints": [{"distinctAttribute": "resource.kubernetes.io/pcieRoot"}]}}}))


def dra_taint_rules():
    """DeviceTaintRules as the API server serves them (resource.k8s.io/v1, Kubernetes 1.37)."""
    d = reset("dra_taint_rules")
    def rule(name, selector, effect="NoSchedule", **taint):
        spec = {"taint": {"key": "example.com/maintenance", "effect": effect,
                          "timeAdded": "2026-12-04T10:00:00Z", **taint}}
        if selector is not None:
            spec["deviceSelector"] = selector
        return {"apiVersion": "resource.k8s.io/v1", "kind": "DeviceTaintRule",
                "metadata": {"name": name, "resourceVersion": "7", "generation": 1},
                "spec": spec,
                "status": {"conditions": [{"type": "EvictionInProgress", "status": "False",
                                           "reason": "NoEviction", "message": "0 pods evicted",
                                           "lastTransitionTime": "2026-12-04T10:00:01Z"}]}}
    rules = {
        "device": rule("gpu-3", {"driver": "gpu.nvidia.com", "pool": "hgx-h100-a", "device": "gpu-3"}),
        "pool": rule("node", {"pool": "hgx-h100-a"}, "NoExecute", value="drain"),
        "device-only": rule("any-gpu-0", {"device": "gpu-0"}),
        "empty-selector": rule("all", {}),
        "no-selector": rule("none", None),
        "effect-none": rule("dry-run", {"driver": "gpu.nvidia.com"}, "None"),
        "effect-unknown": rule("future", {"device": "gpu-1"}, "NoExecuteWithPodDisruptionBudget"),
        "other-driver": rule("other", {"driver": "example.com"}),
    }
    for name, obj in rules.items():
        write(d, name, json.dumps(obj))
    write(d, "missing-effect", json.dumps({"metadata": {"name": "r"}, "spec": {"taint": {"key": "k"}}}))
    write(d, "bad-pool", json.dumps({"metadata": {"name": "r"}, "spec": {"deviceSelector": {"pool": 7}}}))


def companion_slice():
    """The node agent's companion ResourceSlice as the API server answers a GET, POST or PUT."""
    d = reset("companion_slice")
    written = {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceSlice", "metadata": {
        "resourceVersion": "12", "name": "n1-topology.gputopo.dev",
        "labels": {"app.kubernetes.io/managed-by": "gpu-topology-agent"},
        "annotations": {PREFIX + "companion-digest": "0123456789abcdef"},
        "ownerReferences": [{"apiVersion": "v1", "kind": "Node", "name": "n1", "uid": "uid-1"}]},
        "spec": {"driver": "topology.gputopo.dev",
                 "pool": {"name": "n1", "generation": 3, "resourceSliceCount": 1},
                 "nodeName": "n1", "skipNodeOperations": ["*"], "devices": [
                     {"name": "gpu-0", "attributes": {
                         "resource.kubernetes.io/pciBusID": {"string": "0000:06:00.0"},
                         "gpuIndex": {"int": 0}, "nvlinkIsland": {"int": 0},
                         "nvlinkIslandSize": {"int": 4}}}]}}
    write(d, "written", json.dumps(written))
    gate_off = json.loads(json.dumps(written))
    del gate_off["spec"]["skipNodeOperations"]
    write(d, "gate-off", json.dumps(gate_off))
    write(d, "other-operations", json.dumps({"metadata": {"resourceVersion": "7", "annotations": None},
          "spec": {"pool": {"generation": 2},
                   "skipNodeOperations": ["NodePrepareResources", 1, "NodeUnprepareResources"]}}))
    write(d, "generation-overflow",
          '{"metadata":{"resourceVersion":"1"},"spec":{"pool":{"generation":99999999999999999999}}}')
    write(d, "status", json.dumps({"kind": "Status", "code": 404}))
    # Found by the target: a high surrogate escaped after another one was read back as raw
    # surrogate bytes, so the slice written back with it did not read.
    write(d, "unpaired-surrogates", json.dumps(written).replace(
        '"resourceVersion": "12"', '"resourceVersion": "ZZZZZZets\\udaad\\udae8"'))


def watch_stream():
    """First byte: bit 0 Pod (else Node), bit 1 a list page (else a watch stream in chunks of
    1 + (byte >> 2) bytes); then the body, as the API server writes it."""
    d = reset("watch_stream")
    for kind, bit in (("Node", 0), ("Pod", 1)):
        objects = []
        for i, item in enumerate(cluster_objects(kind)):
            item = json.loads(json.dumps(item))
            item["metadata"]["resourceVersion"] = str(100 + i)
            item["metadata"].setdefault("uid", f"uid-{i}")
            objects.append(item)
        lines = [json.dumps({"type": "ADDED", "object": o}) for o in objects]
        lines.append(json.dumps({"type": "MODIFIED", "object": objects[0]}))
        lines.append(json.dumps({"object": objects[-1], "type": "DELETED"}))  # object first
        lines.append(json.dumps({"type": "MODIFIED", "object": {"metadata": {"resourceVersion": "150"}}}))
        lines.append(json.dumps({"type": "BOOKMARK", "object": {"kind": kind, "metadata": {
            "resourceVersion": "200", "annotations": {"k8s.io/initial-events-end": "true"}}}}))
        lines.append(json.dumps({"type": "ERROR", "object": {"kind": "Status", "code": 410,
                                                             "reason": "Expired", "message": "too old"}}))
        stream = ("\n".join(lines) + "\n").encode()
        name = kind.lower()
        write(d, f"{name}-watch-chunk-64", bytes([(63 << 2) | bit]) + stream)
        write(d, f"{name}-watch-chunk-7", bytes([(6 << 2) | bit]) + stream)
        write(d, f"{name}-watch-cut", bytes([(63 << 2) | bit]) + stream[: len(stream) // 2])
        page = {"kind": kind + "List", "apiVersion": "v1",
                "metadata": {"resourceVersion": "300", "continue": "eyJ2Ijo+/="},
                "items": objects + [{"metadata": {"resourceVersion": "301"}}]}
        write(d, f"{name}-list", bytes([2 | bit]) + json.dumps(page).encode())


def group_owners():
    """The group-size owner watches' objects (the unit tests' shapes) and discovery answers."""
    d = reset("group_owners")
    gang = {"metadata": {"name": "llm", "namespace": "ml", "resourceVersion": "3"},
            "spec": {"schedulingPolicy": {"gang": {"minCount": 4}}},
            "status": {"conditions": [{"type": "PodGroupInitiallyScheduled", "status": "False",
                                       "reason": "Unschedulable", "message": "minCount (4)"}]}}
    job = {"metadata": {"name": "idx", "namespace": "ml", "resourceVersion": "1"},
           "spec": {"completionMode": "Indexed", "parallelism": 3, "completions": 8}}
    jobset = {"metadata": {"name": "js", "namespace": "ml", "resourceVersion": "1"},
              "spec": {"replicatedJobs": [{"replicas": 2, "template": {"spec": {"parallelism": 2}}},
                                          {"name": "driver"}]}}
    resources = {"kind": "APIResourceList", "groupVersion": "scheduling.k8s.io/v1beta1",
                 "resources": [{"name": "podgroups", "namespaced": True},
                               {"name": "podgroups/status", "namespaced": True}]}
    for shape, name, obj in [(0, "podgroup", gang), (1, "job", job), (2, "jobset", jobset),
                             (3, "resources", resources)]:
        write(d, name, bytes([shape]) + json.dumps(obj).encode())


def device_plugin_config():
    d = reset("device_plugin_config")
    write(d, "time-slicing", """version: v1
flags:
  migStrategy: none
sharing:
  timeSlicing:
    renameByDefault: false
    failRequestsGreaterThanOne: true
    resources:
    - name: nvidia.com/gpu
      replicas: 4
""")
    write(d, "mps", "version: v1\nsharing:\n  mps:\n    resources:\n    - name: gpu\n      replicas: 2\n")
    write(d, "mig-only", "version: v1\nsharing:\n  timeSlicing:\n    resources:\n"
          "    - name: nvidia.com/mig-1g.10gb\n      replicas: 7\n")
    write(d, "configmap.json", json.dumps({
        "apiVersion": "v1", "kind": "ConfigMap",
        "metadata": {"name": "time-slicing-config", "namespace": "gpu-operator"},
        "data": {"any": "version: v1\nsharing:\n  timeSlicing:\n    resources:\n"
                        "    - name: nvidia.com/gpu\n      replicas: 8\n"}}))
    write(d, "json", json.dumps({"version": "v1", "sharing": {"mps": {
        "failRequestsGreaterThanOne": False,
        "resources": [{"name": "nvidia.com/gpu", "replicas": 3}]}}}))


if __name__ == "__main__":
    verbs()
    whatif()
    quantity()
    node_labels()
    policy_yaml()
    cluster_file()
    kubeconfig()
    dra_objects()
    dra_taint_rules()
    companion_slice()
    watch_stream()
    group_owners()
    device_plugin_config()
