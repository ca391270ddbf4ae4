package cluster

import (
	"testing"
	"time"
)

// The benchmark splits a burst's CPU time between the processes with this; a process that burns
// CPU must show it.
func TestCPUSecondsCountsAChildsWork(t *testing.T) {
	p, err := StartProcess("spin", t.TempDir(), "/bin/sh", "-c", "i=0; while [ $i -lt 300000 ]; do i=$((i+1)); done; sleep 30")
	if err != nil {
		t.Fatal(err)
	}
	defer p.Stop(time.Second)
	deadline := time.Now().Add(20 * time.Second)
	for {
		cpu, err := p.CPUSeconds()
		if err != nil {
			t.Fatal(err)
		}
		if cpu >= 0.05 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("CPU seconds still %v after the child counted to 300000", cpu)
		}
		time.Sleep(50 * time.Millisecond)
	}
}
