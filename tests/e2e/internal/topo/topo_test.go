package topo

import (
	"path/filepath"
	"strings"
	"testing"
)

const captures = "../../../data/topologies"

func mustParse(t *testing.T, name string) *Matrix {
	t.Helper()
	m, err := ParseFile(filepath.Join(captures, name))
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// The DGX-1V capture must give the spec's worked example, except `pci`, which a `topo -m`
// capture cannot fill for NVLinked pairs.
func TestDGX1VMatchesSpecExample(t *testing.T) {
	m := mustParse(t, "dgx1-v100-cubemesh.topo")
	l, err := Labels(m, State{Model: "Tesla-V100-SXM2-16GB", Used: "00100100"}, "")
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{
		"gputopo.dev/v":      "1",
		"gputopo.dev/n":      "8",
		"gputopo.dev/model":  "Tesla-V100-SXM2-16GB",
		"gputopo.dev/fabric": "mesh",
		"gputopo.dev/nvl":    "1122000210200200100001112212",
		"gputopo.dev/pci":    "UUUUSSSUUSUSSUSSUSSSSUUUUUUU",
		"gputopo.dev/numa":   "00001111",
		"gputopo.dev/health": "11111111",
		"gputopo.dev/used":   "00100100",
		"gputopo.dev/mig":    "nnnnnnnn",
		"gputopo.dev/gen":    "1764670000",
	}
	for k, v := range want {
		if l[k] != v {
			t.Errorf("%s = %q, want %q", k, l[k], v)
		}
	}
	if len(l) != len(want) {
		t.Errorf("got %d labels, want %d: %v", len(l), len(want), l)
	}
}

func TestFabricAndPCI(t *testing.T) {
	cases := []struct {
		file, fabric, pciPrefix, numa string
	}{
		{"hgx-a100-nvswitch.topo", "nvsw", "UUUUUUU", "33117755"},
		{"rtx4090x8-all-sys.topo", "none", "SSSSSSS", "00001111"},
		{"pcie8-pix-phb-sys.topo", "none", "PHHSSSS", ""},
		{"pcie8-pix-pxb-sys.topo", "none", "PQQSSSS", ""},
		{"k80x2-workstation-pix-phb.topo", "none", "PHHHHP", "0000"},
		{"dgx1-p100-nvlink-only.topo", "mesh", "UUUUSSS", "ZZZZZZZZ"},
		{"g6e-l40sx4-node.topo", "none", "NNNNNN", "0000"},
		{"gb200-tray-nv18.topo", "nvsw", "UUUUUU", "0011"},
	}
	for _, c := range cases {
		t.Run(c.file, func(t *testing.T) {
			m := mustParse(t, c.file)
			nvl, pci := m.PairStrings()
			if len(nvl) != m.N*(m.N-1)/2 || len(pci) != len(nvl) {
				t.Fatalf("pair strings of length %d/%d for %d GPUs", len(nvl), len(pci), m.N)
			}
			if got := m.Fabric(); got != c.fabric {
				t.Errorf("fabric %q, want %q", got, c.fabric)
			}
			if !strings.HasPrefix(pci, c.pciPrefix) {
				t.Errorf("pci %q, want prefix %q", pci, c.pciPrefix)
			}
			if got := m.numaString(); c.numa != "" && got != c.numa {
				t.Errorf("numa %q, want %q", got, c.numa)
			}
		})
	}
}

// Both partial captures must be rejected, not half-parsed.
func TestRejectsPartialCaptures(t *testing.T) {
	for _, f := range []string{"dgx-a100-nvswitch-partial.topo", "dgx2-v100-nvswitch-partial.topo"} {
		if _, err := ParseFile(filepath.Join(captures, f)); err == nil {
			t.Errorf("%s: parsed without error", f)
		}
	}
}

func TestRejectsBadCells(t *testing.T) {
	for name, text := range map[string]string{
		"asymmetric": "  GPU0 GPU1\nGPU0 X NV1\nGPU1 SYS X\n",
		"unknown":    "  GPU0 GPU1\nGPU0 X FOO\nGPU1 FOO X\n",
		"diagonal":   "  GPU0 GPU1\nGPU0 SYS SYS\nGPU1 SYS X\n",
		"one GPU":    "  GPU0\nGPU0 X\n",
	} {
		if _, err := Parse(strings.NewReader(text)); err == nil {
			t.Errorf("%s: parsed without error", name)
		}
	}
}

// Pair strings of more than 60 characters (12+ GPUs) are split into numbered keys.
func TestChunking(t *testing.T) {
	n := 16
	m := &Matrix{N: n, Link: make([][]string, n), NUMA: make([]int, n)}
	for i := range m.Link {
		m.Link[i] = make([]string, n)
		for j := range m.Link[i] {
			m.Link[i][j] = "NV6"
		}
		m.Link[i][i] = "X"
	}
	l, err := Labels(m, State{}, "p/")
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := l["p/nvl"]; ok {
		t.Error("unchunked p/nvl present")
	}
	joined := l["p/nvl0"] + l["p/nvl1"] + l["p/nvl2"]
	if len(l["p/nvl0"]) != 60 || len(joined) != 120 || strings.Trim(joined, "6") != "" {
		t.Errorf("chunks %q %q %q", l["p/nvl0"], l["p/nvl1"], l["p/nvl2"])
	}
}
