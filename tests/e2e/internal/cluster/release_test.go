package cluster

import "testing"

func TestKnownGatesKeepsOnlyWhatTheBinaryKnows(t *testing.T) {
	r := &Release{Version: "v1.34.4", Minor: 34,
		apiServerGates: map[string]bool{"DRADeviceTaints": false, "DRAPrioritizedList": true},
		schedulerGates: map[string]bool{}}
	if got := r.KnownGates("GenericWorkload=true,DRADeviceTaints=true", false); got != "DRADeviceTaints=true" {
		t.Errorf("API server gates: got %q", got)
	}
	if got := r.KnownGates("GenericWorkload=true", true); got != "" {
		t.Errorf("scheduler gates: got %q, want none", got)
	}
	if r.OnByDefault("DRADeviceTaints") || !r.OnByDefault("DRAPrioritizedList") || !r.OnByDefault("DRAAdminAccess") {
		t.Errorf("defaults: alpha off, beta on, unlisted (locked GA) on")
	}
}

func TestGateLineReadsBothHelpFormats(t *testing.T) {
	for line, want := range map[string]string{
		"      kube:GenericWorkload=true|false (BETA - default=false)": "GenericWorkload",
		"      DRADeviceTaints=true|false (ALPHA - default=false)":     "DRADeviceTaints",
	} {
		m := gateLine.FindStringSubmatch(line)
		if m == nil || m[1] != want {
			t.Errorf("%q: got %v, want %s", line, m, want)
		}
	}
}
