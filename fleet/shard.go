package fleet

import (
	"fmt"
	"strconv"
	"strings"
)

// Shard is this replica's place in a fleet of loadprobes that run the same
// probes together (docs/fleet.md, "Shards"): replica Index of
// Count. Each replica sends its share of every level, and Prometheus sums
// the fleet. The zero value is a lone loadprobe, as is 0/1: it sends every
// level in full.
type Shard struct {
	Index int
	Count int
}

// ShardOrdinal is the replica index that ParseShard reads from the host
// name: a StatefulSet names its pods NAME-ORDINAL, and the pod's host name
// is its name.
const ShardOrdinal = "ordinal"

// ParseShard reads a shard as "i/N" (replica i of N, counted from 0) or as
// "ordinal/N", where i is the number after the last "-" of hostname.
func ParseShard(s, hostname string) (Shard, error) {
	index, count, ok := strings.Cut(s, "/")
	if !ok {
		return Shard{}, fmt.Errorf("%q is not i/N (replica i of N, from 0) nor %s/N", s, ShardOrdinal)
	}
	n, err := strconv.Atoi(count)
	if err != nil || n < 1 {
		return Shard{}, fmt.Errorf("%q: the replica count N must be a whole number of at least 1", s)
	}
	if index == ShardOrdinal {
		_, ordinal, found := cutLast(hostname, "-")
		if !found {
			return Shard{}, fmt.Errorf("%q: host name %q has no pod ordinal (NAME-ORDINAL, as a StatefulSet names its pods)", s, hostname)
		}
		index = ordinal
	}
	i, err := strconv.Atoi(index)
	if err != nil || i < 0 {
		return Shard{}, fmt.Errorf("%q: the replica index %q must be a whole number from 0", s, index)
	}
	if i >= n {
		return Shard{}, fmt.Errorf("%q: the replica index %d must be below the replica count %d", s, i, n)
	}
	return Shard{Index: i, Count: n}, nil
}

func cutLast(s, sep string) (before, after string, found bool) {
	i := strings.LastIndex(s, sep)
	if i < 0 {
		return s, "", false
	}
	return s[:i], s[i+len(sep):], true
}

// Replicas is the replica count N, 1 for the zero value.
func (s Shard) Replicas() int { return max(s.Count, 1) }

// String is the shard as the flag takes it: "i/N".
func (s Shard) String() string {
	return strconv.Itoa(s.Index) + "/" + strconv.Itoa(s.Replicas())
}

// Connections is this replica's share of a closed-loop level: level/N,
// with the remainder going one each to the lowest indexes, so that the
// shares add up to the level exactly (10 over 3 is 4, 3, 3). A share may be
// 0 when the level is below the replica count.
func (s Shard) Connections(level int) int {
	n := s.Replicas()
	share := level / n
	if s.Index < level%n {
		share++
	}
	return share
}

// Rate is this replica's share of an open-loop rate: rate/N.
func (s Shard) Rate(rate float64) float64 { return rate / float64(s.Replicas()) }
