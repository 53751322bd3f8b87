package telemetry

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/common/model"

	"github.com/loadprobe/loadprobe/config"
	"github.com/loadprobe/loadprobe/plan"
)

// A query's answer becomes one value to judge, by the convention of
// docs/guards.md, "Prometheus guards"; an answer without one is an error.
func TestQueryValue(t *testing.T) {
	lo, hi := 5.0, 10.0
	vector := func(values ...string) string {
		s := ""
		for i, v := range values {
			if i > 0 {
				s += ","
			}
			s += fmt.Sprintf(`{"metric":{"pod":"p%d"},"value":[1,%q]}`, i, v)
		}
		return `{"status":"success","data":{"resultType":"vector","result":[` + s + `]}}`
	}
	for _, tc := range []struct {
		name     string
		answer   string
		min, max *float64
		want     float64
		breached bool
		fails    bool
	}{
		{"highest of several above max", vector("3", "50"), nil, &hi, 50, true, false},
		{"lowest of several below min", vector("3", "50"), &lo, nil, 3, true, false},
		{"one below min of a range", vector("3", "8"), &lo, &hi, 3, true, false},
		{"inside the range: the highest", vector("7", "8"), &lo, &hi, 8, false, false},
		{"NaN series left out", vector("NaN", "4"), nil, &hi, 4, false, false},
		{"a scalar", `{"status":"success","data":{"resultType":"scalar","result":[1,"12"]}}`, nil, &hi, 12, true, false},
		{"only NaN", vector("NaN"), nil, &hi, 0, false, true},
		{"empty", vector(), nil, &hi, 0, false, true},
		{"a range vector", `{"status":"success","data":{"resultType":"matrix","result":[]}}`, nil, &hi, 0, false, true},
		{"a query error", `{"status":"error","errorType":"bad_data","error":"parse error"}`, nil, &hi, 0, false, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
				w.Header().Set("Content-Type", "application/json")
				if strings.Contains(tc.answer, `"status":"error"`) {
					w.WriteHeader(http.StatusBadRequest)
				}
				fmt.Fprint(w, tc.answer)
			}))
			defer srv.Close()
			q := plan.GuardQuery{Name: "q", Query: "up", Min: tc.min, Max: tc.max, For: 1}
			w, err := NewWatcher(&plan.PrometheusGuard{Prometheus: plan.Prometheus{URL: srv.URL, HTTPClientConfig: config.DefaultRequest.HTTPClientConfig},
				Interval: model.Duration(time.Second), OnError: plan.OnErrorAbort, Queries: []plan.GuardQuery{q}}, nil)
			if err != nil {
				t.Fatal(err)
			}
			defer w.Stop()
			v, err := w.query(context.Background(), q)
			if (err != nil) != tc.fails {
				t.Fatalf("error %v, want failure %v", err, tc.fails)
			}
			if !tc.fails && (v != tc.want || q.Outside(v) != tc.breached) {
				t.Errorf("value %g (outside: %v), want %g (outside: %v)", v, q.Outside(v), tc.want, tc.breached)
			}
		})
	}
}

// A Prometheus that redirects the guard's query (to loadprobe's own
// /-/pause, or any host) is not followed: the query fails, and nothing
// reaches where it pointed.
func TestGuardFollowsNoRedirect(t *testing.T) {
	var reached atomic.Int64
	sink := httptest.NewServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) { reached.Add(1) }))
	defer sink.Close()
	prom := httptest.NewServer(http.RedirectHandler(sink.URL+"/-/pause", http.StatusTemporaryRedirect))
	defer prom.Close()
	q := plan.GuardQuery{Name: "q", Query: "up", Max: new(1.0), For: 1}
	w, err := NewWatcher(&plan.PrometheusGuard{Prometheus: plan.Prometheus{URL: prom.URL, HTTPClientConfig: config.DefaultRequest.HTTPClientConfig},
		Interval: model.Duration(time.Second), OnError: plan.OnErrorAbort, Queries: []plan.GuardQuery{q}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	if _, err := w.query(context.Background(), q); err == nil {
		t.Error("a redirected query gave a value")
	}
	if n := reached.Load(); n != 0 {
		t.Errorf("the redirect's target got %d requests, want none", n)
	}
}

// One evaluation holds at most EvaluationBytes of answers, all queries
// together: eight queries whose answers are 2 MiB each (31 MiB each was
// read whole before, 2.9 GB an evaluation) each fail as too large.
func TestGuardEvaluationIsBounded(t *testing.T) {
	answer := `{"status":"success","data":{"resultType":"vector","result":[` +
		strings.Repeat(`{"metric":{"pod":"a-long-pod-name-to-pad-the-answer"},"value":[1,"1"]},`, (2<<20)/70) +
		`{"metric":{},"value":[1,"1"]}]}}`
	prom := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, answer)
	}))
	defer prom.Close()
	var queries []plan.GuardQuery
	for i := range 8 {
		queries = append(queries, plan.GuardQuery{Name: fmt.Sprintf("q%d", i), Query: "up", Max: new(2.0), For: 1})
	}
	w, err := NewWatcher(&plan.PrometheusGuard{Prometheus: plan.Prometheus{URL: prom.URL, HTTPClientConfig: config.DefaultRequest.HTTPClientConfig},
		Interval: model.Duration(time.Second), OnError: plan.OnErrorAbort, Queries: queries}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	for _, q := range queries {
		if _, err := w.query(context.Background(), q); err == nil || !strings.Contains(err.Error(), "larger than 1 MiB") {
			t.Errorf("%s: %v; want it refused past its share, 1 MiB of %d MiB", q.Name, err, EvaluationBytes>>20)
		}
	}
}
