package config

import (
	"net/url"
	"testing"
)

// Every way of writing a probe's target that a client dials as the same
// server is the same endpoint; another port or another address is not.
func TestEndpointSpellings(t *testing.T) {
	target := endpointOf(&url.URL{Scheme: "http", Host: "127.0.0.1:18087"})
	for _, host := range []string{
		"127.0.0.1:18087", "localhost:18087", "LOCALHOST.:18087", "127.1:18087", "0x7f000001:18087",
		"0177.0.0.1:18087", "2130706433:18087", "[::ffff:127.0.0.1]:18087", "127.0.0.1:018087", "127.0.0.1.:18087",
	} {
		if !endpointOf(&url.URL{Scheme: "http", Host: host}).same(target) {
			t.Errorf("%s is not read as 127.0.0.1:18087", host)
		}
	}
	for _, host := range []string{"127.0.0.1:18088", "127.0.0.2:18087", "[::1]:18088", "127.0.0.1", "10.0.0.1:18087"} {
		if endpointOf(&url.URL{Scheme: "http", Host: host}).same(target) {
			t.Errorf("%s is read as 127.0.0.1:18087", host)
		}
	}
}
