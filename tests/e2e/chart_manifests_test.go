package e2e

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"path/filepath"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"k8s.io/client-go/discovery/cached/memory"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/restmapper"
	"k8s.io/client-go/tools/clientcmd"
)

// Kinds the chart renders that need CRDs the test API server does not have (Prometheus Operator).
var crdKinds = map[string]bool{"ServiceMonitor": true, "PrometheusRule": true}

// chartManifestsDryRun applies every object the chart renders, with its default values and with
// every option on (tests/ops/values-all-on.yaml), to the real API server with a server-side dry
// run: the API server's own validation must accept each one (field names, types, enums, RBAC
// rules, probe shapes), which helm lint cannot check.
func chartManifestsDryRun(s *scenarioEnv) {
	if s.mode.mode.name != "chart" {
		s.t.Skip("runs once, in chart mode")
	}
	rc, err := clientcmd.BuildConfigFromFlags("", cp.Kubeconfig)
	if err != nil {
		s.t.Fatal(err)
	}
	dyn, err := dynamic.NewForConfig(rc)
	if err != nil {
		s.t.Fatal(err)
	}
	mapper := restmapper.NewDeferredDiscoveryRESTMapper(memory.NewMemCacheClient(client.Discovery()))
	for _, values := range []struct{ name, file string }{
		{"default values", ""},
		{"every option on", filepath.Join(cfg.repoRoot, "tests", "ops", "values-all-on.yaml")},
	} {
		var args []string
		if values.file != "" {
			args = append(args, "-f", values.file)
		}
		out, err := helmTemplate(args...)
		if err != nil {
			s.t.Fatalf("%s: %v", values.name, err)
		}
		objects, err := decodeManifests(out)
		if err != nil {
			s.t.Fatalf("%s: %v", values.name, err)
		}
		applied := 0
		for _, obj := range objects {
			if crdKinds[obj.GetKind()] {
				continue
			}
			gvk := obj.GroupVersionKind()
			mapping, err := mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
			if err != nil {
				s.t.Errorf("%s: %s %s: the API server does not know this kind: %v", values.name, gvk, obj.GetName(), err)
				continue
			}
			resource := dyn.Resource(mapping.Resource)
			var target dynamic.ResourceInterface = resource
			if mapping.Scope.Name() == "namespace" {
				ns := obj.GetNamespace()
				if ns == "" {
					ns = chartNamespace
				}
				target = resource.Namespace(ns)
				nsCtx, nsCancel := apiContext()
				err := ensureNamespace(nsCtx, ns)
				nsCancel()
				if err != nil {
					s.t.Fatal(err)
				}
			}
			ctx, cancel := apiContext()
			_, err = target.Apply(ctx, obj.GetName(), obj, metav1.ApplyOptions{
				FieldManager: "gte-e2e", DryRun: []string{metav1.DryRunAll}, Force: true})
			cancel()
			if err != nil {
				s.t.Errorf("%s: server-side dry run of %s %s refused: %v", values.name, obj.GetKind(), obj.GetName(), err)
				continue
			}
			applied++
		}
		if applied == 0 {
			s.t.Errorf("%s: nothing applied", values.name)
		}
		s.t.Logf("%s: %d objects accepted by a server-side dry run", values.name, applied)
	}
}

// decodeManifests splits a multi-document YAML stream into objects, skipping empty documents.
func decodeManifests(text []byte) ([]*unstructured.Unstructured, error) {
	decoder := utilyaml.NewYAMLOrJSONDecoder(bytes.NewReader(text), 4096)
	var out []*unstructured.Unstructured
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
