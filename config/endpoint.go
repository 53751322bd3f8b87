package config

import (
	"context"
	"net"
	"net/netip"
	"net/url"
	"strconv"
	"strings"
	"time"
)

// endpoint is where a URL leads: its host as written (lower case, without
// a trailing dot), the addresses it spells or resolves to, and its port.
type endpoint struct {
	host  string
	addrs []netip.Addr
	port  uint64
}

// resolveTimeout bounds the name lookup of one host at load.
const resolveTimeout = time.Second

// endpointOf reads u as a client dials it: an IPv4 address in any form
// the C library takes ("127.1", "0x7f000001", "0177.0.0.1"), an IPv6 one
// mapping IPv4, a name resolved as the clients resolve it; the port as a
// number ("018087" is 18087), from the scheme when absent.
func endpointOf(u *url.URL) endpoint {
	e := endpoint{host: strings.TrimSuffix(strings.ToLower(u.Hostname()), ".")}
	port := u.Port()
	if port == "" {
		port = map[string]string{"http": "80", "ws": "80", "https": "443", "wss": "443"}[u.Scheme]
	}
	e.port, _ = strconv.ParseUint(port, 10, 16)
	if a, err := netip.ParseAddr(e.host); err == nil {
		e.addrs = []netip.Addr{a.Unmap()}
	} else if a, ok := inetAton(e.host); ok {
		e.addrs = []netip.Addr{a}
	} else {
		ctx, cancel := context.WithTimeout(context.Background(), resolveTimeout)
		defer cancel()
		addrs, _ := net.DefaultResolver.LookupNetIP(ctx, "ip", e.host)
		for _, a := range addrs {
			e.addrs = append(e.addrs, a.Unmap())
		}
	}
	return e
}

// endpoint is endpointOf(u), read once per load for each scheme and host.
func (v *validator) endpoint(u *url.URL) endpoint {
	key := u.Scheme + "://" + u.Host
	e, ok := v.endpoints[key]
	if !ok {
		e = endpointOf(u)
		v.endpoints[key] = e
	}
	return e
}

// same reports whether two endpoints can be one server: the same port, and
// the same host or an address in common.
func (e endpoint) same(o endpoint) bool {
	if e.port != o.port {
		return false
	}
	if e.host == o.host {
		return true
	}
	for _, a := range e.addrs {
		for _, b := range o.addrs {
			if a == b {
				return true
			}
		}
	}
	return false
}

// inetAton reads an IPv4 address as inet_aton(3) does: one to four numbers,
// each decimal, octal (leading 0) or hexadecimal (0x), the last filling
// the bytes the others leave.
func inetAton(s string) (netip.Addr, bool) {
	parts := strings.Split(s, ".")
	if len(parts) > 4 {
		return netip.Addr{}, false
	}
	var ip uint32
	for i, p := range parts {
		v, err := strconv.ParseUint(p, 0, 32)
		last := i == len(parts)-1
		if err != nil || strings.Contains(p, "_") || !last && v > 255 || last && v >= 1<<(8*(4-i)) {
			return netip.Addr{}, false
		}
		if last {
			ip |= uint32(v)
		} else {
			ip |= uint32(v) << (24 - 8*i)
		}
	}
	return netip.AddrFrom4([4]byte{byte(ip >> 24), byte(ip >> 16), byte(ip >> 8), byte(ip)}), true
}
