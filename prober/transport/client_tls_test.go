package transport

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"io"
	"log"
	"math/big"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gorilla/websocket"
	commoncfg "github.com/prometheus/common/config"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials"

	"github.com/loadprobe/loadprobe/config"
	"github.com/loadprobe/loadprobe/config/template"
	"github.com/loadprobe/loadprobe/demo/target"
	"github.com/loadprobe/loadprobe/internal/testkit"
	"github.com/loadprobe/loadprobe/prober/transport/h1"
	"github.com/loadprobe/loadprobe/prober/transport/ws"
	"github.com/loadprobe/loadprobe/result"
)

// tlsTarget is an https server on loopback that counts its handshakes, and
// echoes over a WebSocket upgrade (wss://). Its certificate (httptest's) is
// for 127.0.0.1 and example.com; caFile holds it.
type tlsTarget struct {
	url, caFile string
	cert        tls.Certificate
	handshakes  atomic.Int64
}

// newTLSTarget starts the server; setup may change its TLS configuration
// before it starts.
func newTLSTarget(t *testing.T, setup func(*tls.Config)) *tlsTarget {
	t.Helper()
	tt := &tlsTarget{}
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if websocket.IsWebSocketUpgrade(r) {
			testkit.Upgrade(w, r, testkit.Echo)
			return
		}
		w.Write([]byte("ok"))
	}))
	srv.TLS = &tls.Config{}
	if setup != nil {
		setup(srv.TLS)
	}
	srv.TLS.VerifyConnection = func(tls.ConnectionState) error { tt.handshakes.Add(1); return nil }
	srv.Config.ErrorLog = log.New(io.Discard, "", 0) // the failed handshakes are the point
	srv.StartTLS()
	t.Cleanup(srv.Close)
	tt.cert = srv.TLS.Certificates[0]
	tt.url = srv.URL + "/"
	tt.caFile = writePEM(t, "ca.pem", "CERTIFICATE", srv.Certificate().Raw)
	return tt
}

func writePEM(t *testing.T, name, typ string, der []byte) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(path, pem.EncodeToMemory(&pem.Block{Type: typ, Bytes: der}), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// clientCert makes a self-signed client certificate and returns it as a
// pool for the server and as files for the client.
func clientCert(t *testing.T) (pool *x509.CertPool, certFile, keyFile string) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "loadprobe test client"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth},
		BasicConstraintsValid: true, IsCA: true,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	cert, _ := x509.ParseCertificate(der)
	pool = x509.NewCertPool()
	pool.AddCert(cert)
	keyDER, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	return pool, writePEM(t, "client.pem", "CERTIFICATE", der), writePEM(t, "client-key.pem", "EC PRIVATE KEY", keyDER)
}

// rawTLSServer is a testkit.Server whose connections handle serves
// through tls.Server, and the request of a client that trusts it
// (HTTP/1.1 only).
func rawTLSServer(t *testing.T, handle func(net.Conn)) (*testkit.Server, config.Request) {
	t.Helper()
	srv := newTLSTarget(t, nil) // for its certificate
	cfg := &tls.Config{Certificates: []tls.Certificate{srv.cert}}
	s := testkit.NewServer(t, func(c net.Conn) { handle(tls.Server(c, cfg)) })
	return s, httpsRequest("https"+strings.TrimPrefix(s.URL, "http"), commoncfg.TLSConfig{CAFile: srv.caFile})
}

func httpsRequest(url string, tc commoncfg.TLSConfig) config.Request {
	req := testRequest(url)
	req.HTTPClientConfig.EnableHTTP2 = false
	req.HTTPClientConfig.TLSConfig = tc
	return req
}

// tlsConn is one connection of a client of path "fast", "std" or
// "websocket" (the wss:// URL of the same server) configured with tc, and
// the code it answers a success with.
func tlsConn(t *testing.T, path, url string, tc commoncfg.TLSConfig) (Conn, int) {
	t.Helper()
	if path != "websocket" {
		return newTestClient(t, httpsRequest(url, tc), path).NewConn(template.NewVars(0)), http.StatusOK
	}
	ws, err := ws.New(compileRequest(t, httpsRequest("wss"+strings.TrimPrefix(url, "https"), tc)), nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(ws.Close)
	return ws.NewConn(template.NewVars(0)), http.StatusSwitchingProtocols
}

// Every tls_config setting means the same on the fast path, through
// net/http and for a wss:// WebSocket probe: the same outcome on all three
// for each.
func TestClientTLSConfigHonoured(t *testing.T) {
	pool, certFile, keyFile := clientCert(t)
	mutual := func(c *tls.Config) { c.ClientAuth, c.ClientCAs = tls.RequireAndVerifyClientCert, pool }
	tls13 := func(c *tls.Config) { c.MinVersion = tls.VersionTLS13 }
	for _, tc := range []struct {
		name   string
		server func(*tls.Config)
		client func(ca string) commoncfg.TLSConfig
		want   result.Outcome
	}{
		{name: "ca_file", client: func(ca string) commoncfg.TLSConfig { return commoncfg.TLSConfig{CAFile: ca} }, want: result.Success},
		{name: "unknown authority", client: func(string) commoncfg.TLSConfig { return commoncfg.TLSConfig{} }, want: result.TLS},
		{name: "insecure_skip_verify", client: func(string) commoncfg.TLSConfig {
			return commoncfg.TLSConfig{InsecureSkipVerify: true}
		}, want: result.Success},
		{name: "server_name in the certificate", client: func(ca string) commoncfg.TLSConfig {
			return commoncfg.TLSConfig{CAFile: ca, ServerName: "example.com"}
		}, want: result.Success},
		{name: "server_name not in the certificate", client: func(ca string) commoncfg.TLSConfig {
			return commoncfg.TLSConfig{CAFile: ca, ServerName: "other.example"}
		}, want: result.TLS},
		{name: "client certificate", server: mutual, client: func(ca string) commoncfg.TLSConfig {
			return commoncfg.TLSConfig{CAFile: ca, CertFile: certFile, KeyFile: keyFile}
		}, want: result.Success},
		{name: "client certificate missing", server: mutual, client: func(ca string) commoncfg.TLSConfig {
			return commoncfg.TLSConfig{CAFile: ca}
		}, want: result.TLS},
		{name: "max_version below the server's minimum", server: tls13, client: func(ca string) commoncfg.TLSConfig {
			return commoncfg.TLSConfig{CAFile: ca, MaxVersion: commoncfg.TLSVersion(tls.VersionTLS12)}
		}, want: result.TLS},
		{name: "min_version the server meets", server: tls13, client: func(ca string) commoncfg.TLSConfig {
			return commoncfg.TLSConfig{CAFile: ca, MinVersion: commoncfg.TLSVersion(tls.VersionTLS13)}
		}, want: result.Success},
	} {
		for _, path := range append(paths, "websocket") {
			t.Run(tc.name+"/"+path, func(t *testing.T) {
				srv := newTLSTarget(t, tc.server)
				conn, success := tlsConn(t, path, srv.url, tc.client(srv.caFile))
				code, o := conn.Do(time.Now().Add(2 * time.Second))
				if o != tc.want || (o == result.Success) != (code == httpCode(success)) {
					t.Errorf("code %d, outcome %v; want %v", code, o, tc.want)
				}
			})
		}
	}
}

// The fast path keeps one TLS connection per Conn: one handshake however
// many requests.
func TestClientTLSKeepsItsConnection(t *testing.T) {
	srv := newTLSTarget(t, nil)
	c := newTestClient(t, httpsRequest(srv.url, commoncfg.TLSConfig{CAFile: srv.caFile}), "")
	if _, ok := c.(*h1.Client); !ok {
		t.Fatal("https without HTTP/2 is not on the fast path over TLS")
	}
	conn := c.NewConn(template.NewVars(0))
	for i := range 20 {
		if code, o := conn.Do(time.Now().Add(2 * time.Second)); o != result.Success || code != result.HTTPStatus(200) {
			t.Fatalf("request %d: code %d, outcome %v", i, code, o)
		}
	}
	if n := srv.handshakes.Load(); n != 1 {
		t.Errorf("%d handshakes for 20 requests on one Conn, want 1", n)
	}
}

// Over TLS the client adds no allocation of its own to an attempt on an
// open connection: crypto/tls makes one (a 24-byte reader) per record it
// reads, on the client's side and on this raw server's, which makes no other.
func TestClientTLSZeroAllocs(t *testing.T) {
	_, req := rawTLSServer(t, testkit.FixedServer)
	conn := newTestClient(t, req, "fast").NewConn(template.NewVars(0))
	defer conn.Close()
	deadline := time.Now().Add(time.Minute)
	conn.Do(deadline) // dial and handshake
	if allocs := testing.AllocsPerRun(200, func() {
		if _, o := conn.Do(deadline); o != result.Success {
			t.Fatalf("outcome %v", o)
		}
	}); allocs > 2 {
		t.Errorf("%v allocations per request, want at most crypto/tls's two", allocs)
	}
}

// `loadprobe run` names the client each probe goes through.
func TestClientPathNamed(t *testing.T) {
	proxy, _ := url.Parse("http://127.0.0.1:3128")
	for _, tc := range []struct {
		url   string
		setup func(*config.Request)
		want  string
	}{
		{url: "http://127.0.0.1:8080/", want: "lean HTTP/1.1 client"},
		{url: "https://127.0.0.1:8443/", setup: func(r *config.Request) { r.HTTPClientConfig.EnableHTTP2 = false }, want: "lean HTTP/1.1 client over TLS"},
		{url: "https://127.0.0.1:8443/", want: "lean client over TLS (HTTP/1.1 or HTTP/2 by ALPN)"},
		{url: "https://127.0.0.1:8443/", setup: func(r *config.Request) { r.HTTP2.StreamsPerConnection = 10 },
			want: "lean client over TLS (HTTP/1.1 or HTTP/2 by ALPN, 10 streams per HTTP/2 connection)"},
		{url: "https://127.0.0.1:8443/", setup: func(r *config.Request) {
			r.HTTPClientConfig.EnableHTTP2, r.HTTPClientConfig.TLSConfig.CARef = false, "ca"
		},
			want: "net/http (tls_config ca_ref)"},
		{url: "http://127.0.0.1:8080/", setup: func(r *config.Request) { r.HTTPClientConfig.ProxyURL = commoncfg.URL{URL: proxy} }, want: "net/http (proxy)"},
		{url: "grpc://127.0.0.1:9090", setup: func(r *config.Request) {
			r.GRPC = &config.GRPC{Method: "demo.Work/Do", Descriptors: config.Reflection, Connections: 1}
		}, want: "gRPC (lean HTTP/2 client, connections: 1)"},
	} {
		req := testRequest(tc.url)
		if tc.setup != nil {
			tc.setup(&req)
		}
		if got := PathOf(compileRequest(t, req), false).String(); got != tc.want {
			t.Errorf("%s: %q, want %q", tc.url, got, tc.want)
		}
	}
	// A flow's step that captures stays on the lean client, but where the
	// server may pick HTTP/2: net/http reads that response's body.
	for _, tc := range []struct {
		req  config.Request
		want string
	}{
		{testRequest("http://127.0.0.1:8080/login"), "lean HTTP/1.1 client"},
		{httpsRequest("https://127.0.0.1:8443/login", commoncfg.TLSConfig{}), "lean HTTP/1.1 client over TLS"},
		{testRequest("https://127.0.0.1:8443/login"), "net/http (capture, HTTP/2 by ALPN)"},
	} {
		if got := PathOf(compileRequest(t, tc.req), true).String(); got != tc.want {
			t.Errorf("a capturing step to %s: %q, want %q", tc.req.URL, got, tc.want)
		}
	}
	if got, want := PathOf(compileRequest(t, testRequest("ws://127.0.0.1:8080/ws")), false).String(), "WebSocket (gorilla/websocket)"; got != want {
		t.Errorf("ws: %q, want %q", got, want)
	}
}

// grpcs:// with a client certificate, against a server that requires one:
// every call OK with it, a TLS failure without it.
func TestGRPCSClientCertificate(t *testing.T) {
	pool, certFile, keyFile := clientCert(t)
	tt := newTLSTarget(t, nil) // its certificate, for 127.0.0.1, and its CA file
	creds := credentials.NewTLS(&tls.Config{Certificates: []tls.Certificate{tt.cert}, ClientAuth: tls.RequireAndVerifyClientCert, ClientCAs: pool})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s := grpc.NewServer(grpc.Creds(creds))
	target.New(target.Options{}).RegisterGRPC(s)
	go func() { _ = s.Serve(ln) }()
	t.Cleanup(s.Stop)
	for _, tc := range []struct {
		name string
		tls  commoncfg.TLSConfig
		want []result.Outcome // of every call
	}{
		{"with the certificate", commoncfg.TLSConfig{CAFile: tt.caFile, CertFile: certFile, KeyFile: keyFile}, []result.Outcome{result.Success}},
		// Under TLS 1.3 a server that requires a certificate rejects the
		// client after the client's handshake has ended: a call may find
		// the connection reset rather than the handshake failed.
		{"without it", commoncfg.TLSConfig{CAFile: tt.caFile}, []result.Outcome{result.TLS, result.Reset}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			req := testRequest("grpcs://" + ln.Addr().String())
			req.HTTPClientConfig.TLSConfig = tc.tls
			req.GRPC = &config.GRPC{Method: "loadprobe.demo.v1.Target/Noop", Descriptors: demoProtoset, Connections: 1}
			c, conn := firstConn(t, compileProbe(t, config.Probe{Request: req}))
			defer c.Close()
			defer conn.Close()
			tlsSeen := false
			for range 10 {
				code, o := conn.Do(time.Now().Add(2 * time.Second))
				if !slices.Contains(tc.want, o) {
					t.Fatalf("call: %v %v; want one of %v", code, o, tc.want)
				}
				tlsSeen = tlsSeen || o == result.TLS
			}
			if len(tc.want) > 1 && !tlsSeen {
				t.Error("no call failed its TLS handshake; want TLS failures")
			}
		})
	}
}
