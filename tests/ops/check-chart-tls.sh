#!/usr/bin/env bash
# The certificates the chart generates (tls.generate) work with the extender itself: rendered
# with client certificates on, the server certificate is served for the Service's name and
# verifies against the generated CA, a client presenting the generated scheduler certificate
# is answered, and one without a certificate is refused. Also: generate refuses Secret names.
# Usage: check-chart-tls.sh PATH/TO/gpu-topology-extender
source "$(dirname "$0")/ops_lib.sh"
binary=${1:?usage: check-chart-tls.sh EXTENDER_BINARY}
need "$binary"
need curl
need "$helm_bin"

values=(--set tls.enabled=true --set tls.generate=true --set tls.clientAuth.enabled=true
  --set extender.metricsPort=9090)
render "$work/rendered.yaml" "${values[@]}"
# The Secrets' data, one file per key: server-tls.crt, server-tls.key, server-ca.crt, client-...
python3 - "$work" <<'PY' || fail "the rendered Secrets are not two kubernetes.io/tls Secrets"
import base64, sys, yaml
work = sys.argv[1]
docs = [d for d in yaml.safe_load_all(open(f"{work}/rendered.yaml")) if d and d.get("kind") == "Secret"]
names = {d["metadata"]["name"]: d for d in docs if d.get("type") == "kubernetes.io/tls"}
wanted = {"gte-gpu-topology-extender-tls": "server", "gte-gpu-topology-extender-scheduler-client-tls": "client"}
if set(wanted) - set(names):
    sys.exit(f"missing Secrets: {sorted(set(wanted) - set(names))}")
for name, prefix in wanted.items():
    for key, value in names[name]["data"].items():
        open(f"{work}/{prefix}-{key}", "wb").write(base64.b64decode(value))
PY
# The Deployments mount what was generated.
grep -q 'secretName: gte-gpu-topology-extender-scheduler-client-tls' "$work/rendered.yaml" ||
  fail "the scheduler does not mount the generated client certificate"

port=$(free_port)
"$binary" serve --listen "127.0.0.1:$port" --tls-cert "$work/server-tls.crt" \
  --tls-key "$work/server-tls.key" --tls-client-ca "$work/server-ca.crt" >"$work/extender.log" 2>&1 &
pid=$!
host=gte-gpu-topology-extender.gpu-system.svc
https() {
  curl -sS --max-time 5 --resolve "$host:$port:127.0.0.1" --cacert "$work/client-ca.crt" "$@" \
    "https://$host:$port/version"
}
for _ in $(seq 1 100); do
  https --cert "$work/client-tls.crt" --key "$work/client-tls.key" >/dev/null 2>&1 && break
  kill -0 "$pid" 2>/dev/null || fail "the extender exited: $(tail -n 5 "$work/extender.log")"
  sleep 0.1
done
out=$(https --cert "$work/client-tls.crt" --key "$work/client-tls.key" 2>&1) ||
  fail "a client with the generated scheduler certificate was not answered: $out"
grep -q '"version"' <<<"$out" || fail "unexpected answer: $out"
if out=$(https 2>&1); then
  fail "a client without a certificate was answered: $out"
fi

if "$helm_bin" template gte "$chart" "${values[@]}" --set tls.secretName=mine >/dev/null 2>&1; then
  fail "tls.generate together with tls.secretName rendered"
fi
echo "chart: generated CA, server and client certificates work with the extender"
