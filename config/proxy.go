package config

import (
	"net/url"

	commoncfg "github.com/prometheus/common/config"
	"golang.org/x/net/http/httpproxy"
)

// ProxyFor returns the proxy that the client settings pc give for u, or nil
// for none: proxy_url (unless no_proxy exempts u), or with
// proxy_from_environment the proxy that HTTP_PROXY, HTTPS_PROXY and
// NO_PROXY give, read from the environment at each call.
//
// A ws or wss URL is asked as its http or https form, as the WebSocket
// handshake is an HTTP request and its dialer asks for that form; the
// environment's resolver knows no proxy for ws schemes, so asking with them
// would report none where the dialer then uses one. The allowlist check and
// every dialer of the prober ask here, so the proxy checked is the proxy used
// (docs/security.md, "Security").
func ProxyFor(pc *commoncfg.ProxyConfig, u *url.URL) (*url.URL, error) {
	asked := *u
	switch u.Scheme {
	case "ws":
		asked.Scheme = "http"
	case "wss":
		asked.Scheme = "https"
	}
	switch {
	case pc.ProxyFromEnvironment:
		return httpproxy.FromEnvironment().ProxyFunc()(&asked)
	case pc.ProxyURL.URL == nil || pc.ProxyURL.String() == "":
		return nil, nil
	case pc.NoProxy == "":
		return pc.ProxyURL.URL, nil
	}
	proxy := pc.ProxyURL.String()
	return (&httpproxy.Config{HTTPProxy: proxy, HTTPSProxy: proxy, NoProxy: pc.NoProxy}).ProxyFunc()(&asked)
}
