// Package promapi builds a client of a Prometheus server's query API from
// prometheus/common's HTTP client settings: the one way loadprobe's
// readers of Prometheus (the fleet reader, the Prometheus guards) reach it.
package promapi

import (
	"fmt"
	"net/http"

	"github.com/prometheus/client_golang/api"
	v1 "github.com/prometheus/client_golang/api/prometheus/v1"
	commoncfg "github.com/prometheus/common/config"
)

// New returns the query API of the Prometheus at url, with its round
// tripper (whose idle connections a caller may close). who names the
// caller in errors and in prometheus/common's client name.
func New(url string, cfg commoncfg.HTTPClientConfig, who string) (v1.API, http.RoundTripper, error) {
	rt, err := commoncfg.NewRoundTripperFromConfig(cfg, "loadprobe_"+who)
	if err != nil {
		return nil, nil, fmt.Errorf("%s Prometheus HTTP settings: %w", who, err)
	}
	c, err := api.NewClient(api.Config{Address: url, RoundTripper: rt})
	if err != nil {
		return nil, nil, fmt.Errorf("%s Prometheus URL %q: %w", who, url, err)
	}
	return v1.NewAPI(c), rt, nil
}
