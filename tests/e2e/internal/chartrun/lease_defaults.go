package chartrun

import (
	"fmt"
	"os"
	"path/filepath"
	"time"

	"sigs.k8s.io/yaml"
)

// LeaseTimings are one leaderElection block of the chart's values.
type LeaseTimings struct {
	LeaseDuration, RenewDeadline, RetryPeriod time.Duration
}

// LeaseDefaults are the lease timings the chart renders with its default values: kube-scheduler's
// (scheduler.leaderElection, which the sidecar extender's renew deadline follows) and the
// standalone extender's own Lease (extender.leaderElection). The HA modes read them so that what
// they measure is what an install gets.
type LeaseDefaults struct {
	Scheduler, Extender LeaseTimings
}

// rawTimings is a leaderElection block as values.yaml spells it ("10s").
type rawTimings struct {
	LeaseDuration string `json:"leaseDuration"`
	RenewDeadline string `json:"renewDeadline"`
	RetryPeriod   string `json:"retryPeriod"`
}

func (r rawTimings) parse(block string) (LeaseTimings, error) {
	var t LeaseTimings
	for _, f := range []struct {
		name, text string
		into       *time.Duration
	}{
		{"leaseDuration", r.LeaseDuration, &t.LeaseDuration},
		{"renewDeadline", r.RenewDeadline, &t.RenewDeadline},
		{"retryPeriod", r.RetryPeriod, &t.RetryPeriod},
	} {
		d, err := time.ParseDuration(f.text)
		if err != nil || d <= 0 {
			return t, fmt.Errorf("values.yaml %s.%s: %q is not a positive duration", block, f.name, f.text)
		}
		*f.into = d
	}
	return t, nil
}

// ReadLeaseDefaults reads the default lease timings from the chart directory's values.yaml.
func ReadLeaseDefaults(chart string) (LeaseDefaults, error) {
	text, err := os.ReadFile(filepath.Join(chart, "values.yaml"))
	if err != nil {
		return LeaseDefaults{}, err
	}
	var values struct {
		Scheduler struct {
			LeaderElection rawTimings `json:"leaderElection"`
		} `json:"scheduler"`
		Extender struct {
			LeaderElection rawTimings `json:"leaderElection"`
		} `json:"extender"`
	}
	if err := yaml.Unmarshal(text, &values); err != nil {
		return LeaseDefaults{}, fmt.Errorf("%s/values.yaml: %w", chart, err)
	}
	var out LeaseDefaults
	if out.Scheduler, err = values.Scheduler.LeaderElection.parse("scheduler.leaderElection"); err != nil {
		return out, err
	}
	out.Extender, err = values.Extender.LeaderElection.parse("extender.leaderElection")
	return out, err
}

// Flag spells d as the extender's duration flags take it ("7000ms": whole milliseconds, so that
// a value such as 2.5s is not rounded).
func Flag(d time.Duration) string {
	return fmt.Sprintf("%dms", d.Milliseconds())
}
