package fleet

import (
	"math"
	"slices"
	"strings"
	"testing"
)

func TestParseShard(t *testing.T) {
	tests := []struct {
		in, hostname string
		want         Shard
		wantErr      string // a part of the error; "" when valid
	}{
		{in: "0/1", want: Shard{0, 1}},
		{in: "2/3", want: Shard{2, 3}},
		{in: "ordinal/3", hostname: "loadprobe-2", want: Shard{2, 3}},
		{in: "ordinal/12", hostname: "load-probe-11", want: Shard{11, 12}},
		{in: "3/3", wantErr: "index 3 must be below the replica count 3"},
		{in: "0/0", wantErr: "count N must be a whole number of at least 1"},
		{in: "-1/3", wantErr: "must be a whole number from 0"},
		{in: "1", wantErr: "is not i/N"},
		{in: "a/3", wantErr: `index "a"`},
		{in: "1/b", wantErr: "count N"},
		{in: "ordinal/3", hostname: "laptop", wantErr: `host name "laptop" has no pod ordinal`},
		{in: "ordinal/3", hostname: "loadprobe-web", wantErr: `index "web"`},
		{in: "ordinal/3", hostname: "loadprobe-3", wantErr: "index 3 must be below the replica count 3"},
	}
	for _, tt := range tests {
		got, err := ParseShard(tt.in, tt.hostname)
		switch {
		case tt.wantErr == "" && err != nil:
			t.Errorf("ParseShard(%q, %q): %v", tt.in, tt.hostname, err)
		case tt.wantErr == "" && got != tt.want:
			t.Errorf("ParseShard(%q, %q) = %v, want %v", tt.in, tt.hostname, got, tt.want)
		case tt.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tt.wantErr)):
			t.Errorf("ParseShard(%q, %q) = %v, %v; want an error with %q", tt.in, tt.hostname, got, err, tt.wantErr)
		}
	}
}

func TestShardConnectionsGiveTheRemainderToTheLowestIndexes(t *testing.T) {
	tests := []struct {
		level, replicas int
		want            []int
	}{
		{10, 3, []int{4, 3, 3}},
		{12, 3, []int{4, 4, 4}},
		{2, 3, []int{1, 1, 0}},
		{1, 3, []int{1, 0, 0}},
		{7, 1, []int{7}},
		{1024, 5, []int{205, 205, 205, 205, 204}},
	}
	for _, tt := range tests {
		var got []int
		for i := range tt.replicas {
			got = append(got, Shard{i, tt.replicas}.Connections(tt.level))
		}
		if !slices.Equal(got, tt.want) {
			t.Errorf("%d connections over %d replicas: %v, want %v", tt.level, tt.replicas, got, tt.want)
		}
	}
}

// Whatever the level and the replica count, the fleet sends the level
// exactly: no connection lost to rounding, none added, and no replica more
// than one connection above another.
func TestShardConnectionsAddUpToTheLevel(t *testing.T) {
	for n := 1; n <= 16; n++ {
		for level := 1; level <= 4096; level++ {
			sum, lo, hi := 0, level, 0
			for i := range n {
				c := Shard{i, n}.Connections(level)
				sum += c
				lo, hi = min(lo, c), max(hi, c)
			}
			if sum != level || hi-lo > 1 {
				t.Fatalf("%d connections over %d replicas: shares sum to %d, spread %d..%d", level, n, sum, lo, hi)
			}
		}
	}
}

func TestShardRatesAddUpToTheLevel(t *testing.T) {
	for _, n := range []int{1, 2, 3, 7} {
		for _, rate := range []float64{0.5, 1, 10, 100, 333, 100000} {
			var sum float64
			for i := range n {
				sum += Shard{i, n}.Rate(rate)
			}
			if !within(sum, rate, 1e-12) {
				t.Errorf("%g req/s over %d replicas: shares sum to %g", rate, n, sum)
			}
		}
	}
}

func within(got, want, frac float64) bool { return math.Abs(got-want) <= frac*want }
