package prober

import (
	"context"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gorilla/websocket"

	"github.com/loadprobe/loadprobe/demo/target"
	"github.com/loadprobe/loadprobe/fleet"
	"github.com/loadprobe/loadprobe/internal/testkit"
	"github.com/loadprobe/loadprobe/prober/live"
	"github.com/loadprobe/loadprobe/result"
)

// wsLive records what a WebSocket run reports live: attempts by outcome,
// handshakes by outcome and close codes.
type wsLive struct {
	live.Nop
	mu         sync.Mutex
	attempts   map[result.Outcome]int
	handshakes map[result.Outcome]int
	codes      map[int]int
}

func newWSLive() *wsLive {
	return &wsLive{attempts: map[result.Outcome]int{}, handshakes: map[result.Outcome]int{}, codes: map[int]int{}}
}

func (l *wsLive) Attempt(o result.Outcome, _ result.Code, _ float64) {
	l.mu.Lock()
	l.attempts[o]++
	l.mu.Unlock()
}

func (l *wsLive) Handshake(o result.Outcome, _ float64) {
	l.mu.Lock()
	l.handshakes[o]++
	l.mu.Unlock()
}

func (l *wsLive) CloseCode(code int) {
	l.mu.Lock()
	l.codes[code]++
	l.mu.Unlock()
}

// wsURL is the demo target's route as a ws:// URL.
func wsURL(t *testing.T, route string) string {
	return "ws" + strings.TrimPrefix(demoTarget(t, target.Options{}), "http") + route
}

func logSteps(t *testing.T, r result.Result) {
	t.Helper()
	for _, s := range r.Steps {
		t.Logf("level %g: %d attempts, goodput %.0f/s, latency p50 %.3fms p99 %.3fms, in flight %.2f, responses %v, errors %v",
			s.Level, s.Attempts, s.Goodput, 1e3*s.Latency.P50, 1e3*s.Latency.P99, s.InFlight, s.Responses, s.Errors)
	}
}

// A session ramp against /ws-limited: every session up to the limit echoes,
// the one beyond is closed with 1013 at every try, and each try's
// handshake is counted.
func TestWebSocketSessionRampFailsFirstAboveTheLimit(t *testing.T) {
	p := probeFor(t, wsURL(t, "/ws-limited"), `concurrency: [4, 8, 9]
step_duration: 500ms`)
	p.Abort.ErrorRatio = 1
	live := newWSLive()
	r := mustRun(t, context.Background(), p, Options{Live: live})
	logSteps(t, r)
	if r.Ended != result.ResultCompleted || len(r.Steps) != 3 {
		t.Fatalf("result %s, %d steps (%s); want 3 completed", r.Ended, len(r.Steps), r.Error)
	}
	limit := float64(target.TargetWSSessions)
	if ff := r.BreakingPoints.FirstFailure; ff == nil || ff.Level != limit+1 {
		t.Errorf("first failure %+v, want level %g (the limit + 1)", ff, limit+1)
	}
	for _, s := range r.Steps[:2] {
		if s.ErrorRatio != 0 || s.Responses[result.HTTPStatus(101)] != s.Attempts {
			t.Errorf("level %g: error ratio %g, responses %v of %d attempts; want every round trip answered", s.Level, s.ErrorRatio, s.Responses, s.Attempts)
		}
	}
	last := r.Steps[2]
	failed := last.Attempts - last.Responses[result.HTTPStatus(101)]
	if last.Errors["closed"] == 0 || last.Errors["closed"] != failed {
		t.Errorf("level 9: errors %v, %d failed attempts; want every failure closed", last.Errors, failed)
	}
	live.mu.Lock()
	defer live.mu.Unlock()
	closed := live.attempts[result.Closed]
	if live.codes[websocket.CloseTryAgainLater] != closed || len(live.codes) != 1 {
		t.Errorf("close codes %v for %d closed attempts; want 1013 for each", live.codes, closed)
	}
	// The limit's sessions opened once each; the one beyond, once per try.
	if got, want := live.handshakes[result.Success], int(limit)+closed; got != want || len(live.handshakes) != 1 {
		t.Errorf("handshakes %v; want %d successful (%g sessions kept, and one per closed attempt)", live.handshakes, want, limit)
	}
}

// An testkit.Echo ramp: sessions are kept across steps, every round trip is a
// response whose latency is reported, and Little's law reads the sessions.
func TestWebSocketEchoRampReportsRoundTrips(t *testing.T) {
	p := probeFor(t, wsURL(t, "/ws"), `concurrency: [1, 2, 4, 8]
step_duration: 500ms`)
	live := newWSLive()
	r := mustRun(t, context.Background(), p, Options{Live: live})
	logSteps(t, r)
	if r.Ended != result.ResultCompleted || len(r.Steps) != 4 {
		t.Fatalf("result %s, %d steps (%s); want 4 completed", r.Ended, len(r.Steps), r.Error)
	}
	// The echo's knee is the generator's and the machine's: on many cores
	// the round trips may still rise at 8 sessions, a knee not reached.
	if k := r.BreakingPoints.Knee; k == nil && r.ReachedUpTo != 8 || r.BreakingPoints.FirstFailure != nil {
		t.Errorf("breaking points %+v, reached up to %g; want a knee, or none reached up to 8, and no failure", r.BreakingPoints, r.ReachedUpTo)
	}
	for _, s := range r.Steps {
		if s.Attempts == 0 || s.Responses[result.HTTPStatus(101)] != s.Attempts || s.Latency.P50 <= 0 || s.Latency.Max < s.Latency.P99 {
			t.Errorf("level %g: %d attempts, responses %v, latency %+v; want every round trip answered and timed", s.Level, s.Attempts, s.Responses, s.Latency)
		}
		// One message at a time per session: the round trips a session
		// started in the window last at most the window plus the last
		// one's overrun (at most the max), and no more arrive than
		// started, so Little's law reads at most level × (1 + max/window);
		// and most of the sessions when the load was held.
		if most := s.Level * (1 + s.Latency.Max/s.DurationSeconds); s.InFlight > most*1.001 || s.LoadHeldRatio < 0.5 {
			t.Errorf("level %g: Little's law reads %.2f in flight (held %.2f); want at most the sessions and most of them", s.Level, s.InFlight, s.LoadHeldRatio)
		}
	}
	live.mu.Lock()
	defer live.mu.Unlock()
	if live.handshakes[result.Success] != 8 || len(live.handshakes) != 1 {
		t.Errorf("handshakes %v; want 8, one per session, kept across steps", live.handshakes)
	}
}

// An HTTP route refuses the upgrade: an http_error by its status code,
// and a handshake counted as such.
func TestWebSocketRefusedUpgradeIsAnHTTPError(t *testing.T) {
	for _, tc := range []struct {
		route string
		code  int
	}{
		{"/noop", 200},
		{"/status?code=403", 403},
		{"/nowhere", 404},
	} {
		t.Run(tc.route, func(t *testing.T) {
			p := probeFor(t, wsURL(t, tc.route), `concurrency: [1]
step_duration: 300ms`)
			live := newWSLive()
			r := mustRun(t, context.Background(), p, Options{Live: live})
			s := r.Steps[0]
			if s.Attempts == 0 || s.HTTPErrors[result.HTTPStatus(tc.code)] != s.Attempts || s.Errors["closed"] != 0 {
				t.Errorf("%d attempts, http errors %v, errors %v; want every attempt an http_error %d", s.Attempts, s.HTTPErrors, s.Errors, tc.code)
			}
			live.mu.Lock()
			defer live.mu.Unlock()
			if n := live.handshakes[result.HTTPError]; n != live.attempts[result.HTTPError] || len(live.handshakes) != 1 {
				t.Errorf("handshakes %v for %d http_error attempts; want one refused handshake each", live.handshakes, live.attempts[result.HTTPError])
			}
		})
	}
}

func TestWebSocketDeadPortIsRefused(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	url := "ws://" + l.Addr().String() + "/ws"
	l.Close()
	p := probeFor(t, url, `concurrency: [1, 2]
step_duration: 300ms`)
	live := newWSLive()
	r := mustRun(t, context.Background(), p, Options{Live: live})
	s := r.Steps[0]
	if s.Attempts == 0 || s.Errors["refused"] != s.Attempts || r.Ended != result.ResultAborted {
		t.Errorf("%d attempts, errors %v, result %s; want every attempt refused and the ramp aborted", s.Attempts, s.Errors, r.Ended)
	}
	live.mu.Lock()
	defer live.mu.Unlock()
	if live.handshakes[result.Refused] == 0 || len(live.handshakes) != 1 {
		t.Errorf("handshakes %v; want refused ones only", live.handshakes)
	}
}

// Open loop: the messages of a rate go over at most load.sessions sessions,
// opened once each; a replica of a fleet has its share of them. The testkit.Echo
// takes 30ms, so 200 messages per second would need six sessions: the cap
// binds, and what finds every session waiting is dropped and counted.
func TestWebSocketOpenLoopSpreadsOverItsSessions(t *testing.T) {
	url := wsServer(t, func(s *websocket.Conn) {
		for {
			typ, msg, err := s.ReadMessage()
			if err != nil {
				return
			}
			time.Sleep(30 * time.Millisecond)
			if s.WriteMessage(typ, msg) != nil {
				return
			}
		}
	})
	for _, tc := range []struct {
		name     string
		shard    fleet.Shard
		sessions int
	}{
		{"alone", fleet.Shard{}, 4},
		{"replica 0 of 2", fleet.Shard{Index: 0, Count: 2}, 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := probeFor(t, url, `rate: [200]
sessions: 4
step_duration: 1s`)
			live := newWSLive()
			r := mustRun(t, context.Background(), p, Options{Live: live, Shard: tc.shard})
			logSteps(t, r)
			s := r.Steps[0]
			if s.Dropped == 0 || s.ErrorRatio != 0 || s.Responses[result.HTTPStatus(101)] != s.Attempts {
				t.Errorf("%d attempts, %d dropped, error ratio %g; want every round trip answered and the rest dropped", s.Attempts, s.Dropped, s.ErrorRatio)
			}
			live.mu.Lock()
			defer live.mu.Unlock()
			if n := live.handshakes[result.Success]; n != tc.sessions || len(live.handshakes) != 1 {
				t.Errorf("handshakes %v; want %d sessions opened", live.handshakes, tc.sessions)
			}
		})
	}
}

// wsServer serves sessions that do what behave says once upgraded.
func wsServer(t *testing.T, behave func(*websocket.Conn)) string {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		testkit.Upgrade(w, r, behave)
	}))
	t.Cleanup(srv.Close)
	return "ws" + strings.TrimPrefix(srv.URL, "http")
}

// How a session that ends during an attempt is told apart: a close frame
// is closed (its code counted), a dropped connection a reset, silence a
// timeout; each time the next attempt opens a new session.
func TestWebSocketSessionEndsAreClassified(t *testing.T) {
	for _, tc := range []struct {
		name   string
		behave func(*websocket.Conn)
		want   result.Outcome
		code   int
	}{
		{"close frame", func(s *websocket.Conn) {
			_, _, _ = s.ReadMessage()
			msg := websocket.FormatCloseMessage(websocket.CloseGoingAway, "bye")
			_ = s.WriteControl(websocket.CloseMessage, msg, time.Now().Add(time.Second))
		}, result.Closed, websocket.CloseGoingAway},
		{"dropped connection", func(s *websocket.Conn) { _, _, _ = s.ReadMessage() }, result.Reset, 0},
		{"no reply", func(s *websocket.Conn) {
			for {
				if _, _, err := s.ReadMessage(); err != nil {
					return
				}
			}
		}, result.Timeout, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := probeFor(t, wsServer(t, tc.behave), `concurrency: [1]
step_duration: 500ms`)
			p.Request.Timeout = time.Duration(100 * time.Millisecond)
			live := newWSLive()
			r := mustRun(t, context.Background(), p, Options{Live: live})
			s := r.Steps[0]
			if s.Attempts < 2 || s.Errors[tc.want.String()] != s.Attempts {
				t.Errorf("%d attempts, errors %v; want every attempt %s", s.Attempts, s.Errors, tc.want)
			}
			live.mu.Lock()
			defer live.mu.Unlock()
			if got := live.handshakes[result.Success]; got != live.attempts[tc.want] {
				t.Errorf("%d handshakes for %d attempts; want a new session for each", got, live.attempts[tc.want])
			}
			if tc.code != 0 && live.codes[tc.code] != live.attempts[tc.want] {
				t.Errorf("close codes %v; want %d counted for each attempt", live.codes, tc.code)
			}
			if tc.code == 0 && len(live.codes) != 0 {
				t.Errorf("close codes %v without a close frame", live.codes)
			}
		})
	}
}

// A canceled run ends the round trips under way at once: sessions that wait
// for replies that never come are closed by Abort, so the run returns
// canceled with nothing left behind, long before its 10s timeout.
func TestWebSocketRunStopsWhenCanceled(t *testing.T) {
	opened := make(chan struct{}, 4)
	url := wsServer(t, func(s *websocket.Conn) {
		opened <- struct{}{}
		for {
			if _, _, err := s.ReadMessage(); err != nil {
				return
			}
		}
	})
	p := probeFor(t, url, `concurrency: [4]
step_duration: 30s`)
	p.Request.Timeout = time.Duration(10 * time.Second)
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		for range 4 {
			<-opened
		}
		cancel() // every session waits for its first reply
	}()
	r := mustRun(t, ctx, p, Options{})
	if r.Ended != result.ResultCanceled || r.Error != "" {
		t.Errorf("result %s (%q); want canceled, with no attempt left behind", r.Ended, r.Error)
	}
}

// keep_alive: false opens a session for every message, each a handshake.
func TestWebSocketWithoutKeepAliveOpensASessionPerMessage(t *testing.T) {
	p := probeFor(t, wsURL(t, "/ws"), `concurrency: [2]
step_duration: 300ms`)
	p.Request.KeepAlive = false
	live := newWSLive()
	r := mustRun(t, context.Background(), p, Options{Live: live})
	s := r.Steps[0]
	if s.Attempts == 0 || s.Responses[result.HTTPStatus(101)] != s.Attempts {
		t.Errorf("%d attempts, responses %v; want every round trip answered", s.Attempts, s.Responses)
	}
	live.mu.Lock()
	defer live.mu.Unlock()
	if live.handshakes[result.Success] != live.attempts[result.Success] {
		t.Errorf("%d handshakes for %d round trips; want one each", live.handshakes[result.Success], live.attempts[result.Success])
	}
}
