package testkit

import (
	"encoding/json"
	"math"
	"net/http"
	"net/http/httptest"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
)

// Series is a time series a fake Prometheus answers with: its value at a
// time, and whether it has one then.
type Series func(time.Time) (float64, bool)

// FakePrometheus answers range queries (/api/v1/query_range) with the
// series of each query, evaluated at the range's points, as Prometheus
// does; a query it does not know is a bad_data error. It counts the
// queries asked in *asked when asked is not nil.
func FakePrometheus(t testing.TB, queries map[string][]Series, asked *atomic.Int64) *httptest.Server {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		if err := r.ParseForm(); err != nil || r.URL.Path != "/api/v1/query_range" {
			http.Error(w, `{"status":"error","errorType":"bad_data","error":"not a range query"}`, http.StatusBadRequest)
			return
		}
		if asked != nil {
			asked.Add(1)
		}
		series, known := queries[r.Form.Get("query")]
		start, err1 := strconv.ParseFloat(r.Form.Get("start"), 64)
		end, err2 := strconv.ParseFloat(r.Form.Get("end"), 64)
		step, err3 := time.ParseDuration(r.Form.Get("step") + "s")
		if !known || err1 != nil || err2 != nil || err3 != nil {
			w.WriteHeader(http.StatusBadRequest)
			w.Write([]byte(`{"status":"error","errorType":"bad_data","error":"unknown query"}`))
			return
		}
		type sample [2]any
		type stream struct {
			Metric map[string]string `json:"metric"`
			Values []sample          `json:"values"`
		}
		var result []stream
		for i, s := range series {
			st := stream{Metric: map[string]string{"instance": strconv.Itoa(i)}}
			for ms := int64(start * 1000); ms <= int64(math.Round(end*1000)); ms += step.Milliseconds() {
				if v, ok := s(time.UnixMilli(ms)); ok {
					st.Values = append(st.Values, sample{float64(ms) / 1000, strconv.FormatFloat(v, 'g', -1, 64)})
				}
			}
			if len(st.Values) > 0 {
				result = append(result, st)
			}
		}
		json.NewEncoder(w).Encode(map[string]any{"status": "success",
			"data": map[string]any{"resultType": "matrix", "result": result}})
	}))
	t.Cleanup(srv.Close)
	return srv
}

// NativeBuckets are a native histogram's positive buckets as counts by
// index, its spans and deltas undone: bucket i holds the values in
// (2^((i-1)/2^schema), 2^(i/2^schema)].
func NativeBuckets(h *dto.Histogram) map[int]int64 {
	buckets := map[int]int64{}
	i, count := 0, int64(0)
	deltas := h.GetPositiveDelta()
	for _, span := range h.GetPositiveSpan() {
		i += int(span.GetOffset())
		for range span.GetLength() {
			count += deltas[0]
			deltas = deltas[1:]
			buckets[i] = count
			i++
		}
	}
	return buckets
}
