// Command delaytarget is the target of bench.sh's latency scenario: on a
// loopback address it answers /delay?ms=N after N milliseconds and measures,
// on its own side, how long each such handler took, so that a generator's
// latency overhead is its p99 minus the server's (the server's own timer
// slack is not the generator's). /__stats reports that as JSON, /__reset
// clears it. It listens on 127.0.0.1 only and writes its address to
// -portfile once listening.
package main

import (
	"encoding/json"
	"flag"
	"log"
	"net"
	"net/http"
	"os"
	"slices"
	"strconv"
	"sync"
	"time"
)

// maxSamples bounds the stored handler times (8 MiB).
const maxSamples = 1 << 20

type handlerTimes struct {
	mu      sync.Mutex
	samples []time.Duration
}

func (h *handlerTimes) add(d time.Duration) {
	h.mu.Lock()
	if len(h.samples) < maxSamples {
		h.samples = append(h.samples, d)
	}
	h.mu.Unlock()
}

func (h *handlerTimes) reset() {
	h.mu.Lock()
	h.samples = h.samples[:0]
	h.mu.Unlock()
}

// stats returns the count and the p50, p99 and max in milliseconds.
func (h *handlerTimes) stats() map[string]any {
	h.mu.Lock()
	s := slices.Clone(h.samples)
	h.mu.Unlock()
	slices.Sort(s)
	out := map[string]any{"n": len(s)}
	if len(s) == 0 {
		return out
	}
	q := func(p float64) float64 {
		i := min(len(s)-1, max(0, int(p*float64(len(s))+0.5)-1))
		return float64(s[i]) / float64(time.Millisecond)
	}
	out["p50_ms"], out["p99_ms"], out["max_ms"] = q(0.50), q(0.99), q(1)
	return out
}

func main() {
	portfile := flag.String("portfile", "", "write the chosen host:port here once listening")
	flag.Parse()
	times := &handlerTimes{}
	mux := http.NewServeMux()
	mux.HandleFunc("/delay", func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		ms, err := strconv.Atoi(r.URL.Query().Get("ms"))
		if err != nil || ms < 0 || ms > 60000 {
			http.Error(w, "ms must be 0..60000", http.StatusBadRequest)
			return
		}
		time.Sleep(time.Duration(ms) * time.Millisecond)
		times.add(time.Since(start))
		w.Write([]byte("ok"))
	})
	mux.HandleFunc("/__stats", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(times.stats())
	})
	mux.HandleFunc("/__reset", func(w http.ResponseWriter, r *http.Request) { times.reset() })
	ln, err := net.Listen("tcp", "127.0.0.1:0") // loopback only, a free port
	if err != nil {
		log.Fatal(err)
	}
	if *portfile != "" {
		if err := os.WriteFile(*portfile, []byte(ln.Addr().String()+"\n"), 0o644); err != nil {
			log.Fatal(err)
		}
	}
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	log.Fatal(srv.Serve(ln))
}
