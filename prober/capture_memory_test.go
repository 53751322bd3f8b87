package prober

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/loadprobe/loadprobe/result"
)

// bigJSON is a JSON body of about size bytes whose token comes last, after
// an array of small objects: the shape that costs most decoded into any.
func bigJSON(size int) string {
	var b strings.Builder
	b.WriteString(`{"items": [`)
	for i := 0; b.Len() < size; i++ {
		if i > 0 {
			b.WriteString(",")
		}
		fmt.Fprintf(&b, `{"id": %d, "name": "item-%06d", "tags": ["a", "b"], "price": 12.5}`, i, i)
	}
	b.WriteString(`], "token": "the-token"}`)
	return b.String()
}

// heapPeak samples the heap's object bytes until stop is closed and
// returns the highest sample.
func heapPeak(stop <-chan struct{}) <-chan uint64 {
	peak := make(chan uint64, 1)
	go func() {
		sample := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
		var high uint64
		tick := time.NewTicker(time.Millisecond)
		defer tick.Stop()
		for {
			metrics.Read(sample)
			high = max(high, sample[0].Value.Uint64())
			select {
			case <-stop:
				peak <- high
				return
			case <-tick.C:
			}
		}
	}()
	return peak
}

// A flow step that captures from a 9 MB JSON body holds about the body per
// virtual user, not a decoded copy many times its size: the heap's peak
// over 1, 4 and 8 users capturing at once stays within a few bodies per
// user, and every iteration finds the token at the body's end.
func TestJSONCaptureMemoryPerUser(t *testing.T) {
	body := []byte(bigJSON(9 << 20))
	var wrong atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/items/1" {
			if r.Header.Get("Authorization") != "Bearer the-token" {
				wrong.Add(1)
			}
			return
		}
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Content-Length", strconv.Itoa(len(body)))
		w.Write(body)
	}))
	t.Cleanup(srv.Close)
	p := templatedProbe(t, fmt.Sprintf(`allowed_targets: ["127.0.0.1"]
probes:
  - name: big
    flow:
      - name: login
        request: {url: "%[1]s/login", timeout: 30s}
        capture: {token: {json: token}}
      - name: item
        request: {url: "%[1]s/items/1", headers: {Authorization: "Bearer {{.token}}"}, timeout: 30s}
    load: {concurrency: [1]}
`, srv.URL))
	const iterations = 3
	// The collector kept close to the live heap, so that the peak measures
	// what the users hold, not the garbage a lazier collector leaves.
	defer debug.SetGCPercent(debug.SetGCPercent(10))
	for _, users := range []int{1, 4, 8} {
		c, err := newWorkload(context.Background(), p, nil)
		if err != nil {
			t.Fatal(err)
		}
		runtime.GC()
		base := heapPeak(closedChan())
		stop := make(chan struct{})
		peak := heapPeak(stop)
		var wg sync.WaitGroup
		var failed atomic.Int64
		for range users {
			conn := attempter{c.newUser()}
			wg.Go(func() {
				defer conn.Close()
				for range iterations {
					if _, o := conn.Do(time.Now().Add(time.Minute)); o != result.Success {
						failed.Add(1)
					}
				}
			})
		}
		wg.Wait()
		close(stop)
		c.close()
		grown := float64(<-peak-<-base) / float64(len(body))
		t.Logf("%d users: heap peak %.0f MB above the start, %.1f bodies per user", users, grown*float64(len(body))/1e6, grown/float64(users))
		if failed.Load() != 0 || wrong.Load() != 0 {
			t.Errorf("%d users: %d of %d iterations failed, %d item requests without the token", users, failed.Load(), users*iterations, wrong.Load())
		}
		// The body, read whole into one buffer of its length, and little
		// else: never many bodies.
		if perUser := grown / float64(users); perUser > 3 {
			t.Errorf("%d users: the heap grew by %.1f bodies per user, want at most 3", users, perUser)
		}
	}
}

func closedChan() chan struct{} {
	c := make(chan struct{})
	close(c)
	return c
}
