// Command demo starts a local cluster with the extender and tells its story (internal/demo):
// a real kube-apiserver and kube-scheduler, four GPU nodes the node agent made from real
// captures, and four pods, each printed with where it went, its GPUs and the extender's
// explanation. The cluster then stays up, with a kubeconfig and the extender's URL to explore it
// (kubectl, the kubectl plugin, explain and what-if), until Ctrl-C. `make demo` runs it.
//
//	go run ./cmd/demo [--once] [--keep-logs]
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"

	"gpu-topology-extender/tests/e2e/internal/demo"
)

func main() {
	os.Exit(run())
}

func run() int {
	once := flag.Bool("once", false, "stop after the story instead of waiting for Ctrl-C")
	keepLogs := flag.Bool("keep-logs", false, "keep the logs' folder (kept anyway on a failure)")
	flag.Parse()
	wd, err := os.Getwd()
	if err != nil {
		return fail(err)
	}
	// Run from tests/e2e (make demo does): the repository is two levels up.
	o := demo.DefaultOptions(filepath.Clean(filepath.Join(wd, "..", "..")), os.Stdout)
	dir, err := os.MkdirTemp("", "gte-demo-")
	if err != nil {
		return fail(err)
	}
	o.WorkDir, o.LogDir = filepath.Join(dir, "work"), filepath.Join(dir, "logs")
	for _, d := range []string{o.WorkDir, o.LogDir} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			return fail(err)
		}
	}
	ctx, cancel := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer cancel()
	d, err := demo.Start(ctx, o)
	if err != nil {
		fmt.Fprintln(os.Stderr, "demo: logs in", o.LogDir)
		return fail(err)
	}
	defer d.Stop()
	if _, err := d.Story(ctx); err != nil {
		fmt.Fprintln(os.Stderr, "demo: logs in", o.LogDir)
		return fail(err)
	}
	if !*keepLogs && *once {
		defer os.RemoveAll(dir)
	}
	if *once {
		return 0
	}
	fmt.Printf(`
The cluster stays up until Ctrl-C. In another shell:
  export KUBECONFIG=%s
  kubectl get pods -n %s -o wide
  kubectl gpu-topology --url %s nodes              # tools/kubectl-gpu_topology on PATH
  build/bin/gpu-topology-extender explain --url %s --pod %s/train-4gpu
  build/bin/gpu-topology-extender whatif --url %s --gpus 8
Logs: %s
`, d.Kubeconfig, demo.Namespace, d.ExtenderURL, d.ExtenderURL, demo.Namespace, d.ExtenderURL,
		o.LogDir)
	<-ctx.Done()
	fmt.Println("\nstopping")
	return 0
}

func fail(err error) int {
	fmt.Fprintln(os.Stderr, "demo:", err)
	return 1
}
