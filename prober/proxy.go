package prober

import (
	"fmt"
	"net/url"

	commoncfg "github.com/prometheus/common/config"

	"github.com/loadprobe/loadprobe/config"
)

// pinProxy resolves once the proxy that pc gives for u, with
// config.ProxyFor, the function the allowlist check asks, and writes it back
// into pc as a fixed proxy_url, or as none. A client's transport then uses
// the proxy that was checked, rather than a resolution of its own (net/http
// reads the environment once per process, and knows no proxy for ws
// schemes). A client reaches one host, so one answer serves all its
// requests (docs/security.md, "Security").
func pinProxy(pc *commoncfg.ProxyConfig, u *url.URL) error {
	proxy, err := config.ProxyFor(pc, u)
	if err != nil {
		return fmt.Errorf("proxy for %s: %w", u.Host, err)
	}
	header := pc.ProxyConnectHeader
	*pc = commoncfg.ProxyConfig{}
	if proxy != nil {
		pc.ProxyURL = commoncfg.URL{URL: proxy}
		pc.ProxyConnectHeader = header
	}
	return nil
}

// pinProxies pins the proxy of the probe's URL u and the one of its
// OAuth2 token endpoint, in a copy of the settings that hc's owner keeps.
func pinProxies(hc *commoncfg.HTTPClientConfig, u *url.URL) error {
	if err := pinProxy(&hc.ProxyConfig, u); err != nil {
		return err
	}
	if hc.OAuth2 == nil {
		return nil
	}
	o := *hc.OAuth2
	token, err := url.Parse(o.TokenURL)
	if err != nil {
		return fmt.Errorf("oauth2.token_url: %w", err)
	}
	if err := pinProxy(&o.ProxyConfig, token); err != nil {
		return fmt.Errorf("oauth2: %w", err)
	}
	hc.OAuth2 = &o
	return nil
}
