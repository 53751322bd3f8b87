package prober

import (
	"fmt"
	"math"
	"strings"

	"github.com/loadprobe/loadprobe/fleet"
	"github.com/loadprobe/loadprobe/plan"
	"github.com/loadprobe/loadprobe/prober/transport"
)

// The generator's own file descriptors (docs/measurement.md, "The
// generator's own limits"): each connection of a level holds one, so a
// level whose connections do not fit the process's limit fails for want of
// descriptors (outcome generator) and its run is not valid. FileNeeds finds
// such levels when the config loads, to warn before any run.

// fileReserve is what the process keeps for itself: its listener and the
// scrapes it serves, config and data files, the runtime's own.
const fileReserve = 64

// FileNeed is a probe's level that may need more file descriptors than the
// process may open.
type FileNeed struct {
	Probe        string
	Level        float64
	Needs, Limit uint64
}

func (n FileNeed) String() string {
	return fmt.Sprintf("probe %s: level %s may need %d file descriptors (its connections and %d for loadprobe itself), above the process's limit of %d (RLIMIT_NOFILE): raise it (ulimit -n), or its attempts beyond it fail as generator and the run is not valid",
		n.Probe, plan.FormatLevel(n.Level), n.Needs, fileReserve, n.Limit)
}

// ClientPath names the client that sends p's requests, for `loadprobe run`
// to say (transport.PathOf); for a flow, each step's.
func ClientPath(p *plan.Probe) string {
	if len(p.Flow) == 0 {
		return transport.PathOf(p.Request, false).String()
	}
	steps := make([]string, len(p.Flow))
	for i, st := range p.Flow {
		steps[i] = st.Name + ": " + transport.PathOf(st.Request, len(st.Captures) > 0).String()
	}
	return "flow (" + strings.Join(steps, "; ") + ")"
}

// FileNeeds lists, for each of probes, its highest level when that
// level's connections may not fit the file-descriptor limit; nothing when
// the limit cannot be read.
func FileNeeds(probes []*plan.Probe, sh fleet.Shard) []FileNeed {
	limit := fileLimit()
	if limit == 0 {
		return nil
	}
	var out []FileNeed
	for _, p := range probes {
		level, conns := mostConnections(p, sh)
		if need := conns + fileReserve; need > limit {
			out = append(out, FileNeed{Probe: p.Name, Level: level, Needs: need, Limit: limit})
		}
	}
	return out
}

// mostConnections is p's level that holds the most connections, and how
// many: a closed-loop level's users; in an open loop, the requests a rate
// can have in flight within their timeout, at most max_in_flight (and at
// most a WebSocket probe's sessions); each user holding the connections
// of its request's path (transport.Path.Conns), or of every step of a
// flow.
func mostConnections(p *plan.Probe, sh fleet.Shard) (level float64, conns uint64) {
	levels := []float64{}
	if s := p.Load.Search; s != nil {
		levels = append(levels, s.Range().Max)
	} else {
		for _, st := range stagesOf(p.Load, sh) {
			levels = append(levels, max(st.level, st.rampTo))
		}
	}
	paths, timeout := []transport.Path{transport.PathOf(p.Request, false)}, p.Request.Timeout
	if len(p.Flow) > 0 {
		paths, timeout = nil, 0
		for _, st := range p.Flow {
			paths = append(paths, transport.PathOf(st.Request, len(st.Captures) > 0))
			timeout += st.Request.Timeout
		}
	}
	for _, l := range levels {
		users := l
		if !p.Load.Mode().ClosedLoop() {
			users = min(math.Ceil(l*timeout.Seconds()), float64(p.Load.MaxInFlight))
			if p.Load.Sessions > 0 {
				users = min(users, float64(p.Load.Sessions))
			}
		}
		var c uint64
		for _, path := range paths {
			c += uint64(path.Conns(int(users)))
		}
		if c > conns {
			level, conns = l, c
		}
	}
	return level, conns
}
