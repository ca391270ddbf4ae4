package demo

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestStory runs `make demo`'s story and checks what it printed: the NVLink job on four
// NVLink-connected GPUs without breaking the H100 board's 8-GPU NVLink set, the MIG pod on the
// MIG node, the group's two members on NVLink pairs, the 8-GPU NVLink pod on that H100 board, a
// second 4-GPU NVLink job on the DGX-1V's free quad and a third Pending with the extender's reason
// (GPU counts alone would have placed it on the L40S node). It starts a control plane of its own,
// so the e2e run (tests/e2e/run.sh) runs it after the scenarios, with GTE_DEMO_TEST=1; without
// it, it skips.
func TestStory(t *testing.T) {
	if os.Getenv("GTE_DEMO_TEST") != "1" {
		t.Skip("GTE_DEMO_TEST=1 runs it (tests/e2e/run.sh does, after the scenarios)")
	}
	wd, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	o := DefaultOptions(filepath.Clean(filepath.Join(wd, "..", "..", "..", "..")), &out)
	o.WorkDir, o.LogDir = t.TempDir(), t.TempDir()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	d, err := Start(ctx, o)
	if err != nil {
		t.Fatalf("start: %v\n%s", err, out.String())
	}
	defer d.Stop()
	placed, err := d.Story(ctx)
	t.Log("\n" + out.String())
	if err != nil {
		t.Fatal(err)
	}
	byPod := map[string]Placement{}
	for _, p := range placed {
		byPod[p.Pod] = p
	}
	// The 4-GPU job with min-link nvlink: a node whose every pair of its GPUs is NVLinked.
	train := byPod["train-4gpu"]
	if train.Node == "" || len(strings.Split(train.GPUs, ",")) != 4 || train.Node == "l40s-a" {
		t.Errorf("train-4gpu = %+v, want 4 GPUs on an NVLink node", train)
	}
	if train.Node == "dgx1v-a" && train.GPUs != "0,1,2,3" && train.GPUs != "4,5,6,7" {
		t.Errorf("train-4gpu on the DGX-1V got %s, not an all-NVLink quad", train.GPUs)
	}
	if train.Node == "h100-a" {
		t.Errorf("train-4gpu broke the H100 board, the cluster's only free 8-GPU NVLink set")
	}
	if p := byPod["infer-mig"]; p.Node != "a100-mig" || !strings.Contains(p.GPUs, ":1g.10gb@") {
		t.Errorf("infer-mig = %+v, want a 1g.10gb instance on a100-mig", p)
	}
	for _, name := range []string{"pair-0", "pair-1"} {
		if p := byPod[name]; p.Node == "" || p.Node == "l40s-a" || len(strings.Split(p.GPUs, ",")) != 2 {
			t.Errorf("%s = %+v, want 2 NVLink-connected GPUs", name, p)
		}
	}
	if p := byPod["nvlink-8"]; p.Node != "h100-a" || len(strings.Split(p.GPUs, ",")) != 8 {
		t.Errorf("nvlink-8 = %+v, want the 8 GPUs of h100-a", p)
	}
	if p := byPod["train-4b"]; p.Node != "dgx1v-a" || p.GPUs != "4,5,6,7" {
		t.Errorf("train-4b = %+v, want the DGX-1V's free quad 4,5,6,7", p)
	}
	if p := byPod["train-4c"]; p.Node != "" || !strings.Contains(p.Reason, "gpu-topology:") {
		t.Errorf("train-4c = %+v, want Pending with the extender's reason", p)
	}
	if !strings.Contains(out.String(), "explain demo/train-4gpu") {
		t.Errorf("no explain table printed")
	}
}
