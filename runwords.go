package main

import (
	"net/http"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"

	"github.com/loadprobe/loadprobe/plan"
	"github.com/loadprobe/loadprobe/result"
)

// words are what run's table calls a probe's levels and answers: an HTTP
// probe's connections, req/s and status codes, a WebSocket probe's
// sessions, messages per second and refused upgrades (docs/websocket.md).
type words struct{ plan.Words }

// wordsFor are the words of p's run r, whose mode is a search's axis.
func wordsFor(p *plan.Probe, r result.Result) words {
	return words{plan.Words{Mode: r.Mode, Protocol: p.Protocol()}}
}

func (w words) webSocket() bool { return w.Protocol == plan.ProtocolWebSocket }

// throughput heads the column of answers per second: a WebSocket probe's
// are message replies, a gRPC stream probe's messages.
func (w words) throughput() string {
	if w.webSocket() || w.Protocol == plan.ProtocolGRPCStream {
		return "msg/s"
	}
	return "rps"
}

// codes heads the column of status codes; a WebSocket reply counts as a 101
// (package ws), which says nothing the goodput does not, so the
// column shows the upgrades refused with their codes.
func (w words) codes() string {
	if w.webSocket() {
		return "refused upgrades"
	}
	return "codes"
}

func (w words) responses(m result.Codes) string {
	if !w.webSocket() {
		return result.Counts(m.Named())
	}
	refused := make(result.Codes, len(m))
	for code, n := range m {
		if code != result.HTTPStatus(http.StatusSwitchingProtocols) {
			refused[code] = n
		}
	}
	return result.Counts(refused.Named())
}

// closeCodes is the close codes of the sessions the server closed during
// probe's runs, as the live metrics counted them: "1013:12", with those
// counted under "other" (docs/metrics.md, "Label values a target chooses")
// last; empty when none.
func closeCodes(g prometheus.Gatherer, probe string) string {
	families, err := g.Gather()
	if err != nil {
		return ""
	}
	byCode := map[string]int64{} // close codes are four digits: they sort as numbers, before "other"
	for _, f := range families {
		if f.GetName() != "loadprobe_websocket_close_codes_total" {
			continue
		}
		for _, m := range f.GetMetric() {
			if label(m, "probe") != probe {
				continue
			}
			byCode[label(m, "code")] += int64(m.GetCounter().GetValue())
		}
	}
	if len(byCode) == 0 {
		return ""
	}
	return result.Counts(byCode)
}

func label(m *dto.Metric, name string) string {
	for _, l := range m.GetLabel() {
		if l.GetName() == name {
			return l.GetValue()
		}
	}
	return ""
}
