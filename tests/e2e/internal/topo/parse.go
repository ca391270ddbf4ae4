// Package topo turns `nvidia-smi topo -m` captures into the labels-v1 node label set
// (docs/labels.md), so e2e fixtures are built from real machines rather than from
// hand-typed pair strings.
package topo

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"regexp"
	"sort"
	"strconv"
	"strings"
)

// Matrix is the GPU-to-GPU part of one capture.
type Matrix struct {
	// N is the number of GPUs.
	N int
	// Link[i][j] is the cell text for GPUs i and j: "X" on the diagonal, "NV<k>", "SYS", "NODE",
	// "PHB", "PXB" or "PIX".
	Link [][]string
	// NUMA[i] is GPU i's NUMA node, -1 when the capture does not say.
	NUMA []int
}

var (
	gpuName  = regexp.MustCompile(`^GPU(\d+)$`)
	nvlCell  = regexp.MustCompile(`^NV(\d+)$`)
	pciCells = map[string]bool{"SYS": true, "SOC": true, "NODE": true, "PHB": true, "PXB": true, "PIX": true}
)

// ParseFile reads one capture file.
func ParseFile(path string) (*Matrix, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	m, err := Parse(f)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return m, nil
}

// header describes the column layout of a capture.
type header struct {
	gpus    int  // GPU columns, GPU0..GPU(gpus-1)
	devices int  // all device columns (GPUs, NICs), before "CPU Affinity"
	hasCPU  bool // a "CPU Affinity" column follows the devices
	hasNUMA bool // a "NUMA Affinity" column follows "CPU Affinity"
}

// Parse reads a capture. It rejects partial captures (missing rows or cells), asymmetric matrices
// and unknown cell values rather than guessing, because a fixture built on a guess would test the
// guess.
func Parse(r io.Reader) (*Matrix, error) {
	sc := bufio.NewScanner(r)
	var lines []string
	for sc.Scan() {
		if strings.TrimSpace(sc.Text()) != "" {
			lines = append(lines, sc.Text())
		}
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	if len(lines) == 0 {
		return nil, fmt.Errorf("empty capture")
	}
	h, err := parseHeader(strings.Fields(lines[0]))
	if err != nil {
		return nil, err
	}
	m := &Matrix{N: h.gpus, Link: make([][]string, h.gpus), NUMA: make([]int, h.gpus)}
	cpuSets := make([]string, h.gpus)
	rows := 0
	for _, line := range lines[1:] {
		f := strings.Fields(line)
		g := gpuName.FindStringSubmatch(f[0])
		if g == nil {
			continue // NIC rows and legends carry nothing about GPU pairs
		}
		i, _ := strconv.Atoi(g[1])
		if i != rows || i >= h.gpus {
			return nil, fmt.Errorf("row %s out of order (want GPU%d)", f[0], rows)
		}
		if len(f) < 1+h.devices {
			return nil, fmt.Errorf("row %s: %d cells, want %d (partial capture?)", f[0], len(f)-1, h.devices)
		}
		m.Link[i] = f[1 : 1+h.gpus]
		rest := f[1+h.devices:]
		cpuSets[i], m.NUMA[i] = "", -1
		if h.hasCPU && len(rest) > 0 {
			cpuSets[i] = rest[0]
		}
		if h.hasNUMA && len(rest) > 1 {
			if v, err := strconv.Atoi(rest[1]); err == nil {
				m.NUMA[i] = v
			}
		}
		rows++
	}
	if rows != h.gpus {
		return nil, fmt.Errorf("%d GPU rows, header names %d GPUs (partial capture?)", rows, h.gpus)
	}
	if err := m.validate(); err != nil {
		return nil, err
	}
	if !h.hasNUMA {
		inferNUMA(m, cpuSets)
	}
	return m, nil
}

func parseHeader(f []string) (header, error) {
	var h header
	for _, tok := range f {
		if tok == "CPU" {
			h.hasCPU = true
			break
		}
		h.devices++
		if g := gpuName.FindStringSubmatch(tok); g != nil {
			if g[1] != strconv.Itoa(h.gpus) || h.gpus != h.devices-1 {
				return h, fmt.Errorf("header: unexpected column %q", tok)
			}
			h.gpus++
		}
	}
	h.hasNUMA = strings.Contains(strings.Join(f, " "), "NUMA Affinity")
	if h.gpus < 2 {
		return h, fmt.Errorf("header: %d GPU columns, want at least 2", h.gpus)
	}
	return h, nil
}

func (m *Matrix) validate() error {
	for i := 0; i < m.N; i++ {
		for j := 0; j < m.N; j++ {
			c := m.Link[i][j]
			switch {
			case i == j:
				if c != "X" {
					return fmt.Errorf("GPU%d: diagonal is %q, want X", i, c)
				}
			case c != m.Link[j][i]:
				return fmt.Errorf("GPU%d-GPU%d: %q vs %q, matrix not symmetric", i, j, c, m.Link[j][i])
			case !pciCells[c] && !nvlCell.MatchString(c):
				return fmt.Errorf("GPU%d-GPU%d: unknown link %q", i, j, c)
			}
		}
	}
	return nil
}

// inferNUMA numbers distinct CPU affinity sets by their lowest CPU, which is how Linux numbers NUMA
// nodes on the two-socket machines these captures come from. Captures without any affinity column
// stay unknown.
func inferNUMA(m *Matrix, cpuSets []string) {
	var distinct []string
	seen := map[string]bool{}
	for _, s := range cpuSets {
		if s == "" || s == "N/A" {
			return
		}
		if !seen[s] {
			seen[s] = true
			distinct = append(distinct, s)
		}
	}
	sort.Slice(distinct, func(a, b int) bool { return firstCPU(distinct[a]) < firstCPU(distinct[b]) })
	node := make(map[string]int, len(distinct))
	for k, d := range distinct {
		node[d] = k
	}
	for i, s := range cpuSets {
		m.NUMA[i] = node[s]
	}
}

func firstCPU(set string) int {
	end := strings.IndexAny(set, ",-")
	if end < 0 {
		end = len(set)
	}
	v, _ := strconv.Atoi(set[:end])
	return v
}
