// Package chartrun runs what the Helm chart renders as processes on this machine: it reads the
// rendered manifests, removes RBAC grants on request (to prove a test needs them), and turns a
// rendered pod spec into a command line with the container's exact arguments, its ConfigMaps
// written out at their mount paths and its service-account identity as a kubeconfig
// (docs/testing.md, "The chart-identity mode").
package chartrun

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"slices"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
)

// Manifests are the objects of one `helm template` run, in its order.
type Manifests []*unstructured.Unstructured

// Decode splits a multi-document YAML stream into objects, skipping empty documents.
func Decode(text []byte) (Manifests, error) {
	decoder := utilyaml.NewYAMLOrJSONDecoder(bytes.NewReader(text), 4096)
	var out Manifests
	for {
		obj := &unstructured.Unstructured{}
		if err := decoder.Decode(&obj.Object); err != nil {
			if errors.Is(err, io.EOF) {
				return out, nil
			}
			return nil, fmt.Errorf("rendered manifests: %w", err)
		}
		if len(obj.Object) == 0 {
			continue
		}
		out = append(out, obj)
	}
}

// OfKinds returns the objects of the given kinds, in rendered order.
func (m Manifests) OfKinds(kinds ...string) Manifests {
	want := map[string]bool{}
	for _, k := range kinds {
		want[k] = true
	}
	var out Manifests
	for _, obj := range m {
		if want[obj.GetKind()] {
			out = append(out, obj)
		}
	}
	return out
}

// Find returns the object of that kind and name, or nil.
func (m Manifests) Find(kind, name string) *unstructured.Unstructured {
	for _, obj := range m {
		if obj.GetKind() == kind && obj.GetName() == name {
			return obj
		}
	}
	return nil
}

// componentLabel is the label the chart gives each of its workloads.
const componentLabel = "app.kubernetes.io/component"

// Workload is a rendered Deployment or DaemonSet: where its pods run and what they run.
type Workload struct {
	Kind      string
	Name      string
	Namespace string
	Labels    map[string]string // the workload object's own
	Template  corev1.PodTemplateSpec
}

// Workload returns the one Deployment or DaemonSet labelled app.kubernetes.io/component=component.
func (m Manifests) Workload(component string) (Workload, error) {
	return m.onlyWorkload(componentLabel+"="+component, func(w Workload) bool {
		return w.Labels[componentLabel] == component
	})
}

// WorkloadRunning returns the one Deployment or DaemonSet whose pods run a container of that name
// (the extender runs in the kube-scheduler's pods in the chart's sidecar layout, in its own
// Deployment in the standalone layout).
func (m Manifests) WorkloadRunning(container string) (Workload, error) {
	return m.onlyWorkload("a container "+container, func(w Workload) bool {
		return slices.ContainsFunc(w.Template.Spec.Containers, func(c corev1.Container) bool { return c.Name == container })
	})
}

func (m Manifests) onlyWorkload(what string, keep func(Workload) bool) (Workload, error) {
	var found []Workload
	for _, obj := range m.OfKinds("Deployment", "DaemonSet") {
		w := Workload{Kind: obj.GetKind(), Name: obj.GetName(), Namespace: obj.GetNamespace(), Labels: obj.GetLabels()}
		var err error
		if w.Kind == "Deployment" {
			var d appsv1.Deployment
			err = runtime.DefaultUnstructuredConverter.FromUnstructured(obj.Object, &d)
			w.Template = d.Spec.Template
		} else {
			var d appsv1.DaemonSet
			err = runtime.DefaultUnstructuredConverter.FromUnstructured(obj.Object, &d)
			w.Template = d.Spec.Template
		}
		if err != nil {
			return Workload{}, fmt.Errorf("%s %s: %w", w.Kind, w.Name, err)
		}
		if keep(w) {
			found = append(found, w)
		}
	}
	if len(found) != 1 {
		return Workload{}, fmt.Errorf("the chart renders %d workloads with %s, want 1", len(found), what)
	}
	return found[0], nil
}

// Service returns the rendered Service name in namespace.
func (m Manifests) Service(name, namespace string) (*corev1.Service, error) {
	for _, obj := range m.OfKinds("Service") {
		if obj.GetName() != name || obj.GetNamespace() != namespace {
			continue
		}
		var svc corev1.Service
		if err := runtime.DefaultUnstructuredConverter.FromUnstructured(obj.Object, &svc); err != nil {
			return nil, fmt.Errorf("Service %s: %w", name, err)
		}
		return &svc, nil
	}
	return nil, fmt.Errorf("the chart renders no Service %s in namespace %s", name, namespace)
}
