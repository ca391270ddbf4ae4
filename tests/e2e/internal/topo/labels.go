package topo

import (
	"fmt"
	"strconv"
	"strings"
)

// DefaultPrefix is the labels-v1 key prefix.
const DefaultPrefix = "gputopo.dev/"

// chunkLen is the longest pair string stored under one key; longer ones are split (labels-v1).
const chunkLen = 60

// State is what a node agent would add to the static topology: which GPUs are taken, healthy, in
// MIG mode. Empty strings mean "all free", "all healthy", "not MIG-capable".
type State struct {
	Model  string         // `model` value, already sanitised
	Used   string         // `used`, one of 0/1/m per GPU
	Health string         // `health`, one of 1/0/c per GPU
	MIG    string         // `mig`, one of n/0/1/p per GPU
	MIGGIs map[int]string // `mig<i>` token strings, e.g. {0: "00u05f"}
	Gen    int64          // `gen`; 0 means 1764670000, a fixed date keeps fixtures reproducible
}

// Labels returns the labels-v1 set for m in state s under prefix (DefaultPrefix if empty).
func Labels(m *Matrix, s State, prefix string) (map[string]string, error) {
	if prefix == "" {
		prefix = DefaultPrefix
	}
	n := m.N
	perGPU := map[string]string{
		"used":   orRepeat(s.Used, "0", n),
		"health": orRepeat(s.Health, "1", n),
		"mig":    orRepeat(s.MIG, "n", n),
	}
	for key, v := range perGPU {
		if len(v) != n {
			return nil, fmt.Errorf("%s: %d characters for %d GPUs", key, len(v), n)
		}
	}
	gen := s.Gen
	if gen == 0 {
		gen = 1764670000
	}
	out := map[string]string{
		prefix + "v":      "1",
		prefix + "n":      strconv.Itoa(n),
		prefix + "fabric": m.Fabric(),
		prefix + "numa":   m.numaString(),
		prefix + "gen":    strconv.FormatInt(gen, 10),
	}
	if s.Model != "" {
		out[prefix+"model"] = s.Model
	}
	for key, v := range perGPU {
		out[prefix+key] = v
	}
	nvl, pci := m.PairStrings()
	PutChunked(out, prefix+"nvl", nvl)
	PutChunked(out, prefix+"pci", pci)
	for i, tokens := range s.MIGGIs {
		if i < 0 || i >= n {
			return nil, fmt.Errorf("mig%d: no such GPU", i)
		}
		out[prefix+"mig"+strconv.Itoa(i)] = tokens
	}
	return out, nil
}

// PairStrings returns the `nvl` and `pci` strings in labels-v1 pair order. A `topo -m` capture
// shows the NVLink count instead of the PCIe path for NVLinked pairs, so their `pci` character is
// `U` (unknown); the schema allows that and forbids guessing.
func (m *Matrix) PairStrings() (nvl, pci string) {
	var nb, pb strings.Builder
	for i := 0; i < m.N; i++ {
		for j := i + 1; j < m.N; j++ {
			links := m.nvlinks(i, j)
			nb.WriteString(strconv.FormatInt(int64(links), 36))
			if links > 0 {
				pb.WriteByte('U')
			} else {
				pb.WriteByte(pciCode[m.Link[i][j]])
			}
		}
	}
	return nb.String(), pb.String()
}

var pciCode = map[string]byte{"PIX": 'P', "PXB": 'Q', "PHB": 'H', "NODE": 'N', "SYS": 'S', "SOC": 'S'}

func (m *Matrix) nvlinks(i, j int) int {
	g := nvlCell.FindStringSubmatch(m.Link[i][j])
	if g == nil {
		return 0
	}
	k, _ := strconv.Atoi(g[1])
	return k
}

// Fabric classifies the NVLink fabric: `none` without NVLink, `nvsw` when every pair has the same
// NVLink count (what NVSwitch systems show), `mesh` otherwise.
func (m *Matrix) Fabric() string {
	first, linked, all := m.nvlinks(0, 1), 0, 0
	uniform := true
	for i := 0; i < m.N; i++ {
		for j := i + 1; j < m.N; j++ {
			all++
			k := m.nvlinks(i, j)
			if k > 0 {
				linked++
			}
			uniform = uniform && k == first
		}
	}
	switch {
	case linked == 0:
		return "none"
	case linked == all && uniform:
		return "nvsw"
	default:
		return "mesh"
	}
}

func (m *Matrix) numaString() string {
	var b strings.Builder
	for _, v := range m.NUMA {
		if v < 0 || v >= 36 {
			b.WriteByte('Z')
		} else {
			b.WriteString(strconv.FormatInt(int64(v), 36))
		}
	}
	return b.String()
}

func orRepeat(v, c string, n int) string {
	if v == "" {
		return strings.Repeat(c, n)
	}
	return v
}

// PutChunked stores v under key, or under key0, key1, … in 60-character chunks when it is longer.
func PutChunked(out map[string]string, key, v string) {
	if len(v) <= chunkLen {
		out[key] = v
		return
	}
	for k := 0; len(v) > 0; k++ {
		end := min(chunkLen, len(v))
		out[key+strconv.Itoa(k)] = v[:end]
		v = v[end:]
	}
}
