package chartrun

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// The chart's own values.yaml: both blocks parse, and the sidecar layout's kube-scheduler lease
// obeys kube-scheduler's start-up checks (leaseDuration > renewDeadline > 1.2 x retryPeriod) and
// fails over within 15 s. A values.yaml edit that breaks either fails here, not in a cluster.
func TestReadLeaseDefaultsOfTheChart(t *testing.T) {
	d, err := ReadLeaseDefaults(filepath.Join("..", "..", "..", "..", "charts", "gpu-topology-extender"))
	if err != nil {
		t.Fatal(err)
	}
	for name, l := range map[string]LeaseTimings{"scheduler": d.Scheduler, "extender": d.Extender} {
		if l.LeaseDuration <= l.RenewDeadline || l.RenewDeadline <= l.RetryPeriod*12/10 {
			t.Errorf("%s.leaderElection %+v: want leaseDuration > renewDeadline > 1.2 x retryPeriod", name, l)
		}
	}
	// After a SIGKILL the standby counts leaseDuration from the read that first showed the last
	// renew (up to 1.2 retry periods after it) and takes over at its first read past that (up to
	// 1.2 more): 10 s + 2.4 s + 2.4 s = 14.8 s at most with the defaults.
	if worst := d.Scheduler.LeaseDuration + 2*d.Scheduler.RetryPeriod*12/10; worst > 15*time.Second {
		t.Errorf("scheduler lease %+v: a killed leader is replaced after up to %v, want <= 15s", d.Scheduler, worst)
	}
}

func TestReadLeaseDefaultsRefusesBadDurations(t *testing.T) {
	dir := t.TempDir()
	values := "scheduler:\n  leaderElection:\n    leaseDuration: 10s\n    renewDeadline: 7s\n    retryPeriod: 2s\n" +
		"extender:\n  leaderElection:\n    leaseDuration: 10s\n    renewDeadline: soon\n    retryPeriod: 1s\n"
	if err := os.WriteFile(filepath.Join(dir, "values.yaml"), []byte(values), 0o600); err != nil {
		t.Fatal(err)
	}
	_, err := ReadLeaseDefaults(dir)
	if err == nil || !strings.Contains(err.Error(), "extender.leaderElection.renewDeadline") {
		t.Errorf("error %v, want one naming extender.leaderElection.renewDeadline", err)
	}
}

func TestFlagKeepsMilliseconds(t *testing.T) {
	for d, want := range map[time.Duration]string{7 * time.Second: "7000ms", 2500 * time.Millisecond: "2500ms"} {
		if got := Flag(d); got != want {
			t.Errorf("Flag(%v) = %q, want %q", d, got, want)
		}
	}
}
