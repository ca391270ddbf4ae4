// Package promtext reads the Prometheus text exposition format as far as the e2e harness needs:
// sample values by name and labels, and quantiles of a histogram between two scrapes.
package promtext

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"math"
	"net/http"
	"sort"
	"strconv"
	"strings"
)

// Sample is one line of the exposition: a metric name, its labels and its value.
type Sample struct {
	Name   string
	Labels map[string]string
	Value  float64
}

// Samples is one scrape.
type Samples []Sample

// Scrape GETs url and parses the answer.
func Scrape(ctx context.Context, url string) (Samples, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return nil, err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("GET %s: HTTP %d", url, resp.StatusCode)
	}
	return Parse(resp.Body)
}

// Parse reads the text format; comment lines (# HELP, # TYPE) and blank lines are skipped.
func Parse(r io.Reader) (Samples, error) {
	var out Samples
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64*1024), 4*1024*1024)
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		s, err := parseLine(line)
		if err != nil {
			return nil, fmt.Errorf("line %d: %w", n, err)
		}
		out = append(out, s)
	}
	return out, sc.Err()
}

// parseLine reads `name{a="x",b="y"} value [timestamp]`.
func parseLine(line string) (Sample, error) {
	s := Sample{Labels: map[string]string{}}
	end := strings.IndexAny(line, "{ ")
	if end <= 0 {
		return s, fmt.Errorf("no value in %q", line)
	}
	s.Name, line = line[:end], line[end:]
	if strings.HasPrefix(line, "{") {
		rest, err := parseLabels(line[1:], s.Labels)
		if err != nil {
			return s, err
		}
		line = rest
	}
	fields := strings.Fields(line)
	if len(fields) == 0 {
		return s, fmt.Errorf("metric %s has no value", s.Name)
	}
	v, err := strconv.ParseFloat(fields[0], 64)
	if err != nil {
		return s, fmt.Errorf("metric %s: %w", s.Name, err)
	}
	s.Value = v
	return s, nil
}

// parseLabels reads `a="x",b="y"}` into dst and returns what follows the closing brace.
func parseLabels(in string, dst map[string]string) (string, error) {
	for {
		in = strings.TrimLeft(in, " ,")
		if strings.HasPrefix(in, "}") {
			return in[1:], nil
		}
		eq := strings.Index(in, `="`)
		if eq <= 0 {
			return "", fmt.Errorf("malformed labels at %q", in)
		}
		name := in[:eq]
		in = in[eq+2:]
		var value strings.Builder
		closed := false
		for i := 0; i < len(in); i++ {
			c := in[i]
			if c == '\\' && i+1 < len(in) {
				i++
				value.WriteByte(unescape(in[i]))
				continue
			}
			if c == '"' {
				in, closed = in[i+1:], true
				break
			}
			value.WriteByte(c)
		}
		if !closed {
			return "", fmt.Errorf("unterminated value of label %s", name)
		}
		dst[name] = value.String()
	}
}

func unescape(c byte) byte {
	if c == 'n' {
		return '\n'
	}
	return c // \\ and \"
}

// Value returns the sum of the samples named name whose labels include every pair of match
// (a counter split by a label it does not care about adds up).
func (ss Samples) Value(name string, match map[string]string) float64 {
	total := 0.0
	for _, s := range ss {
		if s.Name == name && matches(s.Labels, match) {
			total += s.Value
		}
	}
	return total
}

func matches(labels, match map[string]string) bool {
	for k, v := range match {
		if labels[k] != v {
			return false
		}
	}
	return true
}

// Bucket is one cumulative histogram bucket: Count observations at most UpperBound.
type Bucket struct {
	UpperBound float64
	Count      float64
}

// Histogram returns the cumulative buckets of histogram name (the `<name>_bucket` series whose
// labels include match), sorted by upper bound, +Inf last.
func (ss Samples) Histogram(name string, match map[string]string) ([]Bucket, error) {
	byBound := map[float64]float64{}
	for _, s := range ss {
		if s.Name != name+"_bucket" || !matches(s.Labels, match) {
			continue
		}
		le, err := strconv.ParseFloat(s.Labels["le"], 64)
		if err != nil {
			return nil, fmt.Errorf("%s: bucket le=%q: %w", name, s.Labels["le"], err)
		}
		byBound[le] += s.Value
	}
	if len(byBound) == 0 {
		return nil, fmt.Errorf("no %s_bucket series matching %v", name, match)
	}
	out := make([]Bucket, 0, len(byBound))
	for le, c := range byBound {
		out = append(out, Bucket{UpperBound: le, Count: c})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].UpperBound < out[j].UpperBound })
	return out, nil
}

// Delta returns after minus before, bucket by bucket: the observations made between two scrapes
// of the same histogram.
func Delta(before, after []Bucket) []Bucket {
	prev := map[float64]float64{}
	for _, b := range before {
		prev[b.UpperBound] = b.Count
	}
	out := make([]Bucket, len(after))
	for i, b := range after {
		out[i] = Bucket{UpperBound: b.UpperBound, Count: b.Count - prev[b.UpperBound]}
	}
	return out
}

// Quantile estimates the q-quantile (0 < q < 1) as Prometheus' histogram_quantile does: find the
// bucket holding rank q x total and interpolate linearly inside it, from 0 for the first bucket.
// A rank in the +Inf bucket answers the largest finite bound. NaN when there is no observation.
func Quantile(q float64, buckets []Bucket) float64 {
	if len(buckets) == 0 {
		return math.NaN()
	}
	total := buckets[len(buckets)-1].Count
	if total <= 0 {
		return math.NaN()
	}
	rank := q * total
	lower, below := 0.0, 0.0
	for i, b := range buckets {
		if b.Count >= rank {
			if math.IsInf(b.UpperBound, 1) {
				if i == 0 {
					return math.NaN()
				}
				return buckets[i-1].UpperBound
			}
			inBucket := b.Count - below
			if inBucket <= 0 {
				return b.UpperBound
			}
			return lower + (b.UpperBound-lower)*(rank-below)/inBucket
		}
		lower, below = b.UpperBound, b.Count
	}
	return buckets[len(buckets)-1].UpperBound
}
