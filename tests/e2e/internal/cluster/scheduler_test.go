package cluster

import (
	"testing"
	"time"

	schedv1 "k8s.io/kube-scheduler/config/v1"
	"sigs.k8s.io/yaml"
)

// The rendered configuration must decode strictly into the v1 types, as kube-scheduler decodes it,
// and carry the mode's extender settings; a typo would otherwise surface only as a scheduler that
// refuses to start in the middle of the suite.
func TestSchedulerConfigDecodesStrictly(t *testing.T) {
	for _, cache := range []bool{false, true} {
		ext := Extender{
			URLPrefix:        "http://127.0.0.1:1234/scheduler",
			NodeCacheCapable: cache,
			Bind:             cache,
			Preempt:          true,
			Weight:           12,
			ManagedResources: []string{"nvidia.com/gpu", "nvidia.com/mig-3g.40gb"},
		}
		var cfg schedv1.KubeSchedulerConfiguration
		if err := yaml.UnmarshalStrict([]byte(SchedulerConfig("/tmp/kubeconfig", ext)), &cfg); err != nil {
			t.Fatalf("cache=%t: %v", cache, err)
		}
		if cfg.Kind != "KubeSchedulerConfiguration" || cfg.APIVersion != "kubescheduler.config.k8s.io/v1" {
			t.Errorf("cache=%t: kind %q apiVersion %q", cache, cfg.Kind, cfg.APIVersion)
		}
		if len(cfg.Extenders) != 1 {
			t.Fatalf("cache=%t: %d extenders", cache, len(cfg.Extenders))
		}
		e := cfg.Extenders[0]
		if e.URLPrefix != ext.URLPrefix || e.FilterVerb != "filter" || e.PrioritizeVerb != "prioritize" ||
			e.Weight != 12 || e.NodeCacheCapable != cache || (e.BindVerb == "bind") != cache {
			t.Errorf("cache=%t: extender %+v", cache, e)
		}
		if len(e.ManagedResources) != 2 || e.ManagedResources[1].Name != "nvidia.com/mig-3g.40gb" ||
			e.ManagedResources[1].IgnoredByScheduler {
			t.Errorf("cache=%t: managedResources %+v", cache, e.ManagedResources)
		}
		if cfg.LeaderElection.LeaderElect == nil || *cfg.LeaderElection.LeaderElect {
			t.Errorf("cache=%t: leader election not off", cache)
		}
		if cfg.PercentageOfNodesToScore == nil || *cfg.PercentageOfNodesToScore != 100 {
			t.Errorf("cache=%t: percentageOfNodesToScore %v", cache, cfg.PercentageOfNodesToScore)
		}
	}
}

// The benchmark's configurations: kube-scheduler alone must render no extender at all, and a
// raised client rate and the chart's httpTimeout must reach kube-scheduler as set.
func TestSchedulerConfigWithRateAndWithoutExtender(t *testing.T) {
	var alone schedv1.KubeSchedulerConfiguration
	raw := SchedulerConfigWith("/tmp/kubeconfig", ClientRate{QPS: 500, Burst: 1000}, nil)
	if err := yaml.UnmarshalStrict([]byte(raw), &alone); err != nil {
		t.Fatalf("alone: %v", err)
	}
	if len(alone.Extenders) != 0 {
		t.Errorf("alone: %d extenders", len(alone.Extenders))
	}
	if alone.ClientConnection.QPS != 500 || alone.ClientConnection.Burst != 1000 {
		t.Errorf("alone: clientConnection %+v", alone.ClientConnection)
	}

	ext := &Extender{URLPrefix: "http://127.0.0.1:1/scheduler", NodeCacheCapable: true, Bind: true,
		Weight: 12, ManagedResources: []string{"nvidia.com/gpu"}, HTTPTimeout: 3 * time.Second}
	var with schedv1.KubeSchedulerConfiguration
	if err := yaml.UnmarshalStrict([]byte(SchedulerConfigWith("/tmp/kubeconfig", ClientRate{}, ext)), &with); err != nil {
		t.Fatalf("with extender: %v", err)
	}
	if with.ClientConnection.QPS != 0 || with.ClientConnection.Burst != 0 {
		t.Errorf("default rate rendered as %+v, want kube-scheduler's defaults left unset", with.ClientConnection)
	}
	if len(with.Extenders) != 1 || with.Extenders[0].HTTPTimeout.Duration != 3*time.Second {
		t.Errorf("extenders %+v, want one with httpTimeout 3s", with.Extenders)
	}
}

// The sidecar shape's kube-scheduler: leader election on the given Lease with its timings (the
// chart's, in the ha-sidecar mode); zero timings are left to kube-scheduler; without a lease it
// stays off.
func TestSchedulerConfigLeasedElectsOnTheLease(t *testing.T) {
	var leased schedv1.KubeSchedulerConfiguration
	raw := SchedulerConfigLeased("/tmp/kubeconfig", ClientRate{}, nil, &Lease{Namespace: "ns", Name: "sched",
		LeaseDuration: 10 * time.Second, RenewDeadline: 7 * time.Second, RetryPeriod: 2 * time.Second})
	if err := yaml.UnmarshalStrict([]byte(raw), &leased); err != nil {
		t.Fatalf("leased: %v", err)
	}
	le := leased.LeaderElection
	if le.LeaderElect == nil || !*le.LeaderElect || le.ResourceNamespace != "ns" || le.ResourceName != "sched" ||
		le.LeaseDuration.Duration != 10*time.Second || le.RenewDeadline.Duration != 7*time.Second ||
		le.RetryPeriod.Duration != 2*time.Second {
		t.Errorf("leader election %+v, want on, ns/sched, 10s/7s/2s", le)
	}
	var untimed schedv1.KubeSchedulerConfiguration
	raw = SchedulerConfigLeased("/tmp/kubeconfig", ClientRate{}, nil, &Lease{Namespace: "ns", Name: "sched"})
	if err := yaml.UnmarshalStrict([]byte(raw), &untimed); err != nil {
		t.Fatalf("untimed: %v", err)
	}
	if le := untimed.LeaderElection; le.LeaseDuration.Duration != 0 || le.RenewDeadline.Duration != 0 ||
		le.RetryPeriod.Duration != 0 {
		t.Errorf("zero timings rendered as %+v, want them left to kube-scheduler", le)
	}
	var off schedv1.KubeSchedulerConfiguration
	if err := yaml.UnmarshalStrict([]byte(SchedulerConfigWith("/tmp/kubeconfig", ClientRate{}, nil)), &off); err != nil {
		t.Fatal(err)
	}
	if off.LeaderElection.LeaderElect == nil || *off.LeaderElection.LeaderElect {
		t.Errorf("without a lease leader election is %v, want off", off.LeaderElection.LeaderElect)
	}
}
