package cluster

import (
	"fmt"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
)

// Release is the control plane's Kubernetes release, as its binaries report it, and the feature
// gates each binary knows. The version matrix (make e2e-matrix) runs the same suite against older
// control planes: a gate a release does not know would stop its binary at start, so every gate
// list goes through KnownGates.
type Release struct {
	Version string // "v1.34.4"
	Minor   int    // 34
	// Per gate the binary lists: its default (locked GA gates are not listed).
	apiServerGates map[string]bool
	schedulerGates map[string]bool
}

var (
	versionLine = regexp.MustCompile(`^Kubernetes (v1\.(\d+)\.\d+)`)
	// A gate line of --help's --feature-gates list, e.g. "kube:GenericWorkload=true|false (BETA ...)"
	// (no "kube:" prefix before 1.35).
	gateLine = regexp.MustCompile(`^\s+(?:kube:)?([A-Za-z0-9]+)=true\|false \((?:ALPHA|BETA|GA|DEPRECATED) - default=(true|false)\)`)
)

// ProbeRelease asks binDir's kube-apiserver and kube-scheduler for their version and gates.
func ProbeRelease(binDir string) (*Release, error) {
	out, err := exec.Command(filepath.Join(binDir, "kube-apiserver"), "--version").Output()
	if err != nil {
		return nil, fmt.Errorf("kube-apiserver --version: %w", err)
	}
	m := versionLine.FindStringSubmatch(strings.TrimSpace(string(out)))
	if m == nil {
		return nil, fmt.Errorf("kube-apiserver --version printed %q, not \"Kubernetes v1.N.P\"", out)
	}
	r := &Release{Version: m[1]}
	r.Minor, _ = strconv.Atoi(m[2])
	if r.apiServerGates, err = gatesOf(filepath.Join(binDir, "kube-apiserver")); err != nil {
		return nil, err
	}
	if r.schedulerGates, err = gatesOf(filepath.Join(binDir, "kube-scheduler")); err != nil {
		return nil, err
	}
	return r, nil
}

func gatesOf(binary string) (map[string]bool, error) {
	// --help exits 0 and prints to stdout; some releases print usage to stderr.
	out, err := exec.Command(binary, "--help").CombinedOutput()
	if err != nil {
		return nil, fmt.Errorf("%s --help: %w", filepath.Base(binary), err)
	}
	gates := map[string]bool{}
	for _, line := range strings.Split(string(out), "\n") {
		if m := gateLine.FindStringSubmatch(line); m != nil {
			gates[m[1]] = m[2] == "true"
		}
	}
	if len(gates) == 0 {
		return nil, fmt.Errorf("%s --help lists no feature gates", filepath.Base(binary))
	}
	return gates, nil
}

// AtLeast: the release is v1.minor or newer.
func (r *Release) AtLeast(minor int) bool { return r.Minor >= minor }

// APIServerKnows / SchedulerKnows: the binary has the gate (alpha, beta or not yet locked GA).
func (r *Release) APIServerKnows(gate string) bool { _, ok := r.apiServerGates[gate]; return ok }
func (r *Release) SchedulerKnows(gate string) bool { _, ok := r.schedulerGates[gate]; return ok }

// OnByDefault: a cluster of this release runs with the feature on unless its admin turned it off:
// the API server lists the gate with default=true, or no longer lists it (GA, locked on). Only for
// gates every release of the matrix has had (an unlisted gate could also be one not invented yet).
func (r *Release) OnByDefault(gate string) bool {
	on, listed := r.apiServerGates[gate]
	return on || !listed
}

// KnownGates keeps the gates of a "--feature-gates" value ("A=true,B=true") that the binary
// knows; forScheduler picks kube-scheduler's list, else kube-apiserver's.
func (r *Release) KnownGates(gates string, forScheduler bool) string {
	known := r.apiServerGates
	if forScheduler {
		known = r.schedulerGates
	}
	var kept []string
	for _, g := range strings.Split(gates, ",") {
		name, _, _ := strings.Cut(g, "=")
		if _, ok := known[name]; name != "" && ok {
			kept = append(kept, g)
		}
	}
	return strings.Join(kept, ",")
}
