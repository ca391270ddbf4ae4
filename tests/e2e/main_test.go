// Package e2e runs the extender under test behind a real kube-scheduler and kube-apiserver.
//
// TestMain starts etcd and kube-apiserver once; TestE2E then runs every scenario once per mode
// (see modes_test.go), each mode with its own extender and kube-scheduler processes.
package e2e

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"

	"gpu-topology-extender/tests/e2e/internal/cluster"
)

// namespace holds every test pod.
const namespace = "gte-e2e"

// Set by TestMain, read-only afterwards.
var (
	cfg    settings
	cp     *cluster.ControlPlane
	client kubernetes.Interface
	// dyn reaches what the typed client has no types for: the JobSet CRD and its objects.
	dyn    dynamic.Interface
	logDir string
)

func TestMain(m *testing.M) {
	os.Exit(runMain(m))
}

func runMain(m *testing.M) int {
	var err error
	if cfg, err = loadSettings(); err != nil {
		fmt.Fprintln(os.Stderr, "e2e:", err)
		return 2
	}
	for _, bin := range []string{"etcd", "kube-apiserver", "kube-scheduler"} {
		if _, err := os.Stat(filepath.Join(cfg.binDir, bin)); err != nil {
			fmt.Fprintf(os.Stderr, "e2e: %v\ne2e: build the control plane with tests/e2e/hack/build-control-plane.sh "+
				"(tests/e2e/run.sh does it), or set E2E_BIN_DIR\n", err)
			return 2
		}
	}
	if logDir, err = os.MkdirTemp("", "gte-e2e-"); err != nil {
		fmt.Fprintln(os.Stderr, "e2e:", err)
		return 2
	}
	fmt.Printf("e2e: logs in %s\n", logDir)
	stopOnSignal()

	code := withControlPlane(m)
	if code == 0 && !cfg.keepLogs {
		os.RemoveAll(logDir)
	} else {
		fmt.Printf("e2e: logs kept in %s\n", logDir)
	}
	return code
}

// stopOnSignal stops every child on SIGINT/SIGTERM so an interrupted run leaves nothing behind
// (children also get SIGKILL through Pdeathsig if this process dies some other way).
func stopOnSignal() {
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, syscall.SIGINT, syscall.SIGTERM)
	go func() {
		s := <-sig
		fmt.Fprintf(os.Stderr, "e2e: %v: stopping all processes\n", s)
		cluster.StopAll()
		os.Exit(130)
	}()
}

func withControlPlane(m *testing.M) int {
	defer cluster.StopAll()
	ctx := context.Background()
	start := time.Now()
	var err error
	cp, err = cluster.StartControlPlane(ctx, cfg.binDir, filepath.Join(logDir, "work"), logDir)
	if err != nil {
		fmt.Fprintln(os.Stderr, "e2e: control plane:", err)
		return 1
	}
	fmt.Printf("e2e: control plane up at %s in %s\n", cp.URL, time.Since(start).Round(time.Second))
	if client, err = newClient(cp.Kubeconfig); err != nil {
		fmt.Fprintln(os.Stderr, "e2e:", err)
		return 1
	}
	if dyn, err = newDynamicClient(cp.Kubeconfig); err != nil {
		fmt.Fprintln(os.Stderr, "e2e:", err)
		return 1
	}
	// Before any extender starts: its discovery then finds JobSets served and watches them.
	if err := installJobSetCRD(ctx); err != nil {
		fmt.Fprintln(os.Stderr, "e2e: JobSet CRD:", err)
		return 1
	}
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: namespace}}
	if _, err := client.CoreV1().Namespaces().Create(ctx, ns, metav1.CreateOptions{}); err != nil {
		fmt.Fprintln(os.Stderr, "e2e: create namespace:", err)
		return 1
	}
	return m.Run()
}

func newDynamicClient(kubeconfig string) (dynamic.Interface, error) {
	rc, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	if err != nil {
		return nil, err
	}
	rc.Timeout = 30 * time.Second
	return dynamic.NewForConfig(rc)
}

func newClient(kubeconfig string) (kubernetes.Interface, error) {
	rc, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	if err != nil {
		return nil, err
	}
	// The burst scenario creates 50 pods at once; the default 5 QPS would make that take 10 s.
	rc.QPS, rc.Burst = 100, 200
	rc.Timeout = 30 * time.Second
	return kubernetes.NewForConfig(rc)
}
