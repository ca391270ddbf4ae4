#!/usr/bin/env bash
# Every kubectl command in the docs, the chart README and the chart's NOTES (as `helm install`
# prints them, for each layout) names objects the chart creates: each
# `deploy/NAME`, `svc/NAME`, `ds/NAME`, `cm/NAME` (and their long forms) resolves, for the release
# `gte` in namespace gpu-system that the docs install, in the default (sidecar) layout, or in the
# standalone layout where the line says so; `-n`/`--namespace` on such a line is gpu-system; `-c CONTAINER` names a container of that
# Deployment or DaemonSet. Placeholders (NAME, <release>, RELEASE, …) are not checked.
source "$(dirname "$0")/ops_lib.sh"
need "$helm_bin"

render "$work/sidecar.yaml"
render "$work/standalone.yaml" --set layout=standalone

# kind/name and kind/name:container lines of both renders.
objects() {
python3 - "$1" <<'PY'
import sys
for path in sys.argv[1:]:
    kind = name = None
    in_containers = False
    for line in open(path):
        line = line.rstrip("\n")
        if line.startswith("---"):
            kind = name = None
            continue
        if line.startswith("kind: "):
            kind = line.split(": ", 1)[1].strip().lower()
        elif line.startswith("  name: ") and name is None and kind is not None:
            name = line.split(": ", 1)[1].strip()
            print(f"{kind}/{name}")
        elif line.strip() in ("containers:", "initContainers:"):
            in_containers = True
        elif in_containers and line.lstrip().startswith("- name: ") and kind and name:
            print(f"{kind}/{name}:{line.split(': ', 1)[1].strip()}")
PY
}
objects "$work/sidecar.yaml" >"$work/sidecar.objects"
objects "$work/standalone.yaml" >"$work/standalone.objects"
# NOTES.txt as helm install prints it, per layout (no cluster needed: --dry-run=client).
notes() {
  "$helm_bin" install gte "$chart" --namespace gpu-system --dry-run=client "$@" |
    sed -n '/^NOTES:/,$p'
}
notes >"$work/sidecar.notes" || fail "helm install --dry-run (sidecar) failed"
notes --set layout=standalone >"$work/standalone.notes" || fail "helm install --dry-run (standalone) failed"
[[ -s $work/sidecar.notes && -s $work/standalone.notes ]] || fail "helm install printed no NOTES"

python3 - "$work/sidecar.objects" "$work/standalone.objects" "$repo_root" \
  "$work/sidecar.notes" "$work/standalone.notes" <<'PY' || fail "a doc command names an object the chart does not create (above)"
import glob, os, re, sys
sidecar = set(open(sys.argv[1]).read().split())
standalone = set(open(sys.argv[2]).read().split())
root = sys.argv[3]
kinds = {"deploy": "deployment", "deployment": "deployment", "svc": "service",
         "service": "service", "ds": "daemonset", "daemonset": "daemonset",
         "cm": "configmap", "configmap": "configmap"}
ref = re.compile(r"\b(deploy|deployment|svc|service|ds|daemonset|cm|configmap)/([A-Za-z0-9.<>{}_…-]+)")
bad = []
files = glob.glob(os.path.join(root, "docs", "*.md")) + [
    os.path.join(root, "README.md"), os.path.join(root, "charts/gpu-topology-extender/README.md")]
# The NOTES of each layout are checked against that layout's objects.
notes = {sys.argv[4]: "sidecar", sys.argv[5]: "standalone"}
checked = 0
for path in files + list(notes):
    for number, line in enumerate(open(path), 1):
        if "kubectl" not in line:
            continue
        for short, name in ref.findall(line):
            if re.search(r"[A-Z<>{}…]", name):
                continue  # a placeholder
            kind = kinds[short]
            where = (f"NOTES ({notes[path]} layout):{number}" if path in notes
                     else f"{os.path.relpath(path, root)}:{number}")
            checked += 1
            layout = notes.get(path) or ("standalone" if "standalone" in line else "sidecar")
            objects = standalone if layout == "standalone" else sidecar
            if f"{kind}/{name}" not in objects:
                bad.append(f"{where}: {short}/{name} is no {kind} of the chart "
                           f"({layout} layout; say 'standalone' on a line for that layout's names)")
                continue
            ns = re.search(r"(?:-n|--namespace)[ =]([a-z0-9-]+)", line)
            if ns and ns.group(1) != "gpu-system":
                bad.append(f"{where}: {short}/{name} is in gpu-system, not {ns.group(1)}")
            container = re.search(r"(?:-c|--container)[ =]([a-z0-9-]+)", line)
            if container and f"{kind}/{name}:{container.group(1)}" not in objects:
                bad.append(f"{where}: {kind}/{name} has no container {container.group(1)}")
for line in bad:
    print(line, file=sys.stderr)
print(f"{checked} object references checked")
sys.exit(1 if bad or checked == 0 else 0)
PY
echo "ok: doc commands name the chart's objects"
