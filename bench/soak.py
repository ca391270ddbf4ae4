#!/usr/bin/env python3
"""Soak: the extender under a fixed request rate with label churn, for minutes.

Starts the extender binary in full-Node mode (no cluster: every request carries its Nodes, so
label churn reaches the extender through the requests, as kube-scheduler would send it after
the agent relabels a node) and sends filter and prioritize alternately over one keep-alive
connection at a fixed rate. Every second a share of the nodes changes: one GPU flips between
free and used in `gputopo.dev/used`, and `gputopo.dev/gen` moves, so the extender's node-state
memo keeps rebuilding and evicting. Every interval it prints the requests sent, the errors
(non-200, an `Error` field, a body that does not parse), filter and prioritize p50/p99 and the
extender's RSS. Exits 1 on any error. Figures: docs/performance.md.

  bench/soak.py build/bin/gpu-topology-extender [--minutes 10] [--nodes 1000] [--rate 5]
                [--churn 0.02] [--interval 60]
"""
import argparse
import http.client
import json
import os
import random
import signal
import socket
import statistics
import subprocess
import sys
import time

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TEMPLATES = os.path.join(REPO, "tests", "golden", "cases", "filter-nodes-2gpu.request.json")


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def node_templates():
    with open(TEMPLATES) as f:
        request = json.load(f)
    return request["Pod"], request["Nodes"]["items"]


class Cluster:
    """N Nodes cloned from the golden request's templates, each kept as its JSON text."""

    def __init__(self, templates, count, rng):
        self.rng = rng
        self.nodes = []
        for i in range(count):
            node = json.loads(json.dumps(templates[i % len(templates)]))
            node["metadata"]["name"] = f"soak-{i:05d}"
            # What kube-scheduler's Node carries besides labels, so the body is realistic in size.
            node["status"]["conditions"] = [
                {"type": t, "status": "False", "reason": "KubeletHasNo" + t}
                for t in ("MemoryPressure", "DiskPressure", "PIDPressure")
            ] + [{"type": "Ready", "status": "True", "reason": "KubeletReady"}]
            node["status"]["addresses"] = [{"type": "InternalIP", "address": f"10.0.{i // 250}.{i % 250}"}]
            self.nodes.append(node)
        self.texts = [json.dumps(n, separators=(",", ":")) for n in self.nodes]
        self.gen = 1764670000

    def churn(self, share):
        """Relabels round(share x N) nodes: one GPU flips in `used`, and `gen` moves."""
        self.gen += 1
        changed = max(1, round(share * len(self.nodes)))
        for i in self.rng.sample(range(len(self.nodes)), changed):
            labels = self.nodes[i]["metadata"]["labels"]
            used = labels.get("gputopo.dev/used")
            if used:
                gpu = self.rng.randrange(len(used))
                flipped = "1" if used[gpu] == "0" else "0" if used[gpu] == "1" else used[gpu]
                labels["gputopo.dev/used"] = used[:gpu] + flipped + used[gpu + 1:]
            if "gputopo.dev/gen" in labels:
                labels["gputopo.dev/gen"] = str(self.gen)
            self.texts[i] = json.dumps(self.nodes[i], separators=(",", ":"))

    def body(self, pod_text):
        return ('{"Pod":' + pod_text + ',"Nodes":{"items":[' + ",".join(self.texts) +
                ']},"NodeNames":null}').encode()


def rss_mib(pid):
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    return float("nan")


def percentile(values, q):
    if not values:
        return float("nan")
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def answer_error(verb, status, payload):
    """The error a kube-scheduler would see in this answer, or None."""
    if status != 200:
        return f"HTTP {status}"
    try:
        doc = json.loads(payload)
    except ValueError:
        return "unparsable body"
    if verb == "filter":
        if doc.get("Error"):
            return "Error: " + doc["Error"]
        if not isinstance(doc.get("Nodes", {}).get("items"), list):
            return "no Nodes.items"
    elif not isinstance(doc, list):
        return "prioritize answer is not a list"
    return None


def start_extender(binary, port, log):
    proc = subprocess.Popen([binary, "serve", "--listen", f"127.0.0.1:{port}", "--policy",
                             os.path.join(REPO, "config", "scheduler-policy.yaml")],
                            stdout=log, stderr=subprocess.STDOUT)
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        try:
            c = http.client.HTTPConnection("127.0.0.1", port, timeout=1)
            c.request("GET", "/readyz")
            if c.getresponse().status == 200:
                return proc
        except OSError:
            pass
        if proc.poll() is not None:
            sys.exit(f"soak: the extender exited with {proc.returncode}")
        time.sleep(0.1)
    proc.kill()
    sys.exit("soak: the extender did not become ready")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("binary")
    ap.add_argument("--minutes", type=float, default=10)
    ap.add_argument("--nodes", type=int, default=1000)
    ap.add_argument("--rate", type=float, default=5, help="filter+prioritize pairs per second")
    ap.add_argument("--churn", type=float, default=0.02, help="share of nodes relabelled per second")
    ap.add_argument("--interval", type=float, default=60, help="seconds per report line")
    ap.add_argument("--seed", type=int, default=1)
    args = ap.parse_args()

    rng = random.Random(args.seed)
    pod, templates = node_templates()
    pod_text = json.dumps(pod, separators=(",", ":"))
    cluster = Cluster(templates, args.nodes, rng)
    port = free_port()
    log = open(os.devnull, "w")
    proc = start_extender(args.binary, port, log)
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    print(f"soak: {args.nodes} nodes (full-Node body {len(cluster.body(pod_text)) // 1024} KiB), "
          f"{args.rate:g} filter+prioritize pairs/s, {args.churn:.0%} of nodes relabelled per second, "
          f"{args.minutes:g} min")
    print(f"{'t(s)':>6} {'requests':>8} {'errors':>6} {'filter p50':>10} {'p99':>7} "
          f"{'prio p50':>9} {'p99':>7} {'RSS MiB':>8}")
    lat = {"filter": [], "prioritize": []}
    total_errors = 0
    sent = 0
    rss_series = []
    start = time.monotonic()
    next_pair = start
    next_churn = start + 1
    next_report = start + args.interval
    end = start + args.minutes * 60
    try:
        while time.monotonic() < end:
            now = time.monotonic()
            if now >= next_churn:
                cluster.churn(args.churn)
                next_churn += 1
            if now < next_pair:
                time.sleep(min(next_pair, next_churn, next_report) - now)
                continue
            next_pair += 1 / args.rate
            body = cluster.body(pod_text)
            for verb in ("filter", "prioritize"):
                t0 = time.perf_counter()
                conn.request("POST", f"/scheduler/{verb}", body, {"Content-Type": "application/json"})
                response = conn.getresponse()
                payload = response.read()
                lat[verb].append((time.perf_counter() - t0) * 1000)
                sent += 1
                error = answer_error(verb, response.status, payload)
                if error:
                    total_errors += 1
                    print(f"soak: {verb}: {error[:200]}", file=sys.stderr)
            if time.monotonic() >= next_report:
                rss = rss_mib(proc.pid)
                rss_series.append(rss)
                print(f"{time.monotonic() - start:6.0f} {sent:8d} {total_errors:6d} "
                      f"{percentile(lat['filter'], 0.5):8.1f}ms {percentile(lat['filter'], 0.99):5.1f}ms "
                      f"{percentile(lat['prioritize'], 0.5):7.1f}ms {percentile(lat['prioritize'], 0.99):5.1f}ms "
                      f"{rss:8.1f}", flush=True)
                lat = {"filter": [], "prioritize": []}
                next_report += args.interval
    finally:
        proc.send_signal(signal.SIGINT)  # SIGTERM would wait out the drain period
        proc.wait(timeout=30)
    if len(rss_series) >= 3:
        settled = rss_series[1:]
        print(f"soak: RSS after the first interval {min(settled):.1f}-{max(settled):.1f} MiB "
              f"(median {statistics.median(settled):.1f}), last/second {settled[-1] / settled[0]:.2f}x")
    print(f"soak: {sent} requests, {total_errors} errors, extender exit code {proc.returncode}")
    return 1 if total_errors or proc.returncode not in (0, -2) else 0


if __name__ == "__main__":
    sys.exit(main())
