package main

import "testing"

// A mistyped burst list must stop the benchmark before it spends minutes creating nodes.
func TestParseIntsRefusesWhatIsNotAPositiveCount(t *testing.T) {
	got, err := parseInts("500, 1500")
	if err != nil || len(got) != 2 || got[0] != 500 || got[1] != 1500 {
		t.Fatalf("parseInts(\"500, 1500\") = %v, %v", got, err)
	}
	for _, bad := range []string{"", "0", "-5", "500,x", "1e3"} {
		if _, err := parseInts(bad); err == nil {
			t.Errorf("parseInts(%q) accepted", bad)
		}
	}
}
