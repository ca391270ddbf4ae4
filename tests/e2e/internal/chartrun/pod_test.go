package chartrun

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
)

// testPod is a trimmed rendering of the chart's extender Deployment.
func testPod() corev1.PodSpec {
	return corev1.PodSpec{
		ServiceAccountName: "gte",
		Containers: []corev1.Container{{
			Name:  "extender",
			Image: "gpu-topology-extender:0.1.0",
			Args: []string{"serve", "--listen=0.0.0.0:8888", "--policy=/etc/gte/policy.yaml", "--in-cluster",
				"--metrics-listen", ":9090", "--label-prefix=gputopo.dev/", "--path-prefix=/scheduler"},
			Env: []corev1.EnvVar{{Name: "MODE", Value: "x"},
				{Name: "NODE_NAME", ValueFrom: &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{FieldPath: "spec.nodeName"}}}},
			Ports: []corev1.ContainerPort{{Name: "http", ContainerPort: 8888}, {Name: "metrics", ContainerPort: 9090}},
			ReadinessProbe: &corev1.Probe{ProbeHandler: corev1.ProbeHandler{HTTPGet: &corev1.HTTPGetAction{
				Path: "/readyz", Port: intstr.FromString("metrics")}}},
			VolumeMounts: []corev1.VolumeMount{{Name: "policy", MountPath: "/etc/gte"}, {Name: "tmp", MountPath: "/tmp"}},
		}},
		Volumes: []corev1.Volume{
			{Name: "policy", VolumeSource: corev1.VolumeSource{ConfigMap: &corev1.ConfigMapVolumeSource{
				LocalObjectReference: corev1.LocalObjectReference{Name: "gte-policy"}}}},
			{Name: "tmp", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}},
		},
	}
}

func testPlacement(t *testing.T) Placement {
	ports := []int{40001, 40002}
	return Placement{
		PodRoot: t.TempDir(), NodeRoot: t.TempDir(), NodeName: "gpu-1", Namespace: "ns",
		Kubeconfig: "/k/gte.kubeconfig",
		Images: map[string]Image{"gpu-topology-extender": {
			Entrypoint:   "/usr/local/bin/gpu-topology-extender",
			Binaries:     map[string]string{"/usr/local/bin/gpu-topology-extender": "/build/ext"},
			URLPathFlags: []string{"--path-prefix"},
		}},
		ConfigMap: func(name string) (map[string]string, error) {
			if name != "gte-policy" {
				return nil, errors.New("not found")
			}
			return map[string]string{"policy.yaml": "strategy: binpack\n"}, nil
		},
		FreePort: func() (int, error) { p := ports[0]; ports = ports[1:]; return p, nil },
	}
}

func TestPrepareTranslatesOnlyPathsPortsAndIdentity(t *testing.T) {
	p := testPlacement(t)
	proc, err := Prepare(testPod(), "extender", p)
	if err != nil {
		t.Fatal(err)
	}
	policy := filepath.Join(p.PodRoot, "etc/gte/policy.yaml")
	want := []string{"serve", "--listen=127.0.0.1:40001", "--policy=" + policy, "--kubeconfig=/k/gte.kubeconfig",
		"--metrics-listen", "127.0.0.1:40002", "--label-prefix=gputopo.dev/", "--path-prefix=/scheduler"}
	if proc.Binary != "/build/ext" || strings.Join(proc.Args, " ") != strings.Join(want, " ") {
		t.Errorf("got %s %q\nwant /build/ext %q", proc.Binary, proc.Args, want)
	}
	if got, err := os.ReadFile(policy); err != nil || string(got) != "strategy: binpack\n" {
		t.Errorf("policy file: %q, %v", got, err)
	}
	if st, err := os.Stat(filepath.Join(p.PodRoot, "tmp")); err != nil || !st.IsDir() {
		t.Errorf("emptyDir /tmp not made: %v", err)
	}
	if strings.Join(proc.Env, " ") != "MODE=x NODE_NAME=gpu-1" {
		t.Errorf("env %q", proc.Env)
	}
	if url, err := proc.ProbeURL(); err != nil || url != "http://127.0.0.1:40002/readyz" {
		t.Errorf("probe %q, %v", url, err)
	}
}

func TestPrepareRefusesWhatARealPodWouldNotRun(t *testing.T) {
	cases := []struct {
		name   string
		mutate func(*corev1.PodSpec, *Placement)
		want   string
	}{
		{"path under no mount", func(s *corev1.PodSpec, _ *Placement) {
			s.Containers[0].Args[2] = "--policy=/etc/gpu-topology-extender/policy.yaml"
		}, "under no volume mount"},
		{"mount of a ConfigMap the chart does not render", func(s *corev1.PodSpec, _ *Placement) {
			s.Volumes[0].ConfigMap.Name = "other"
		}, "ConfigMap ns/other"},
		{"listen on an undeclared port", func(s *corev1.PodSpec, _ *Placement) {
			s.Containers[0].Args[1] = "--listen=0.0.0.0:8080"
		}, "port 8080"},
		{"in-cluster without a token", func(s *corev1.PodSpec, _ *Placement) {
			no := false
			s.AutomountServiceAccountToken = &no
		}, "automountServiceAccountToken"},
		{"command the image lacks", func(s *corev1.PodSpec, _ *Placement) {
			s.Containers[0].Command = []string{"/usr/bin/gpu-topology-extender"}
		}, "has no /usr/bin/gpu-topology-extender"},
		{"probe on a port name the container lacks", func(s *corev1.PodSpec, _ *Placement) {
			s.Containers[0].Ports[1].Name = "prom"
		}, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			spec, p := testPod(), testPlacement(t)
			c.mutate(&spec, &p)
			proc, err := Prepare(spec, "extender", p)
			if c.want == "" { // a probe problem shows when the harness asks for the probe
				if err == nil {
					_, err = proc.ProbeURL()
				}
				c.want = `no port named "metrics"`
			}
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("error %v, want one containing %q", err, c.want)
			}
		})
	}
}

func TestImageRepository(t *testing.T) {
	for in, want := range map[string]string{
		"registry.k8s.io/kube-scheduler:v1.37.2": "registry.k8s.io/kube-scheduler",
		"localhost:5000/gte:1@sha256:abc":        "localhost:5000/gte",
		"localhost:5000/gte":                     "localhost:5000/gte",
		"gpu-topology-extender":                  "gpu-topology-extender",
	} {
		if got := imageRepository(in); got != want {
			t.Errorf("imageRepository(%q) = %q, want %q", in, got, want)
		}
	}
}
