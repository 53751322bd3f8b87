package config

import (
	"strings"
	"testing"

	"github.com/loadprobe/loadprobe/plan"
)

// A stream probe compiles its schedule; max_in_flight_per_stream
// defaults to 100.
func TestGRPCStreamProbe(t *testing.T) {
	c, err := Parse("g.yml", []byte(grpcConfig(`      url: grpc://127.0.0.1:1
      grpc:
        method: loadprobe.demo.v1.Target/Echo
        message: '{"n": {{index}}}'
        descriptors: `+demoProtoset+`
        stream: {kind: bidi, messages_per_second: 250, match: n}
`)))
	if err != nil {
		t.Fatal(err)
	}
	p := c.Plans()[0]
	want := plan.GRPCStream{Kind: plan.StreamBidi, MessagesPerSecond: 250, MaxInFlight: 100, Match: "n"}
	if s := p.Request.GRPC.Stream; s == nil || *s != want {
		t.Errorf("stream %+v, want %+v", s, want)
	}
	if p.Protocol() != plan.ProtocolGRPCStream || p.Words().Unit() != "streams" {
		t.Errorf("protocol %q, unit %q; want grpc_stream in streams", p.Protocol(), p.Words().Unit())
	}
}

func TestGRPCStreamErrors(t *testing.T) {
	echo := "      url: grpc://127.0.0.1:1\n      grpc:\n        method: loadprobe.demo.v1.Target/Echo\n        descriptors: " + demoProtoset + "\n"
	for _, tc := range []struct{ name, lines, want string }{
		{"a unary method", "      url: grpc://127.0.0.1:1\n      grpc:\n        method: loadprobe.demo.v1.Target/Work\n        descriptors: " + demoProtoset + "\n        stream: {kind: bidi, messages_per_second: 10}\n",
			`g.yml:8: probes[0].request.grpc.method: loadprobe.demo.v1.Target.Work is a unary method: grpc.stream applies to streaming methods`},
		{"a stream without its section", echo,
			`g.yml:8: probes[0].request.grpc.method: loadprobe.demo.v1.Target.Echo is a bidi-streaming method: set grpc.stream`},
		{"the wrong kind", echo + "        stream: {kind: server}\n",
			`g.yml:8: probes[0].request.grpc.method: loadprobe.demo.v1.Target.Echo is a bidi-streaming method, not server`},
		{"an unknown kind", echo + "        stream: {kind: duplex, messages_per_second: 10}\n",
			`g.yml:10: probes[0].request.grpc.stream.kind: must be bidi, client or server (got "duplex")`},
		{"no rate", echo + "        stream: {kind: bidi}\n",
			`g.yml:10: probes[0].request.grpc.stream.messages_per_second: must be above 0 and at most 100000 (got 0)`},
		{"a rate on a server stream", "      url: grpc://127.0.0.1:1\n      grpc:\n        method: loadprobe.demo.v1.Target/Tick\n        stream: {kind: server, messages_per_second: 10}\n",
			`g.yml:9: probes[0].request.grpc.stream.messages_per_second: applies to bidi and client streams: a server stream sends at the server's pace`},
		{"in flight", echo + "        stream: {kind: bidi, messages_per_second: 10, max_in_flight_per_stream: 0}\n",
			`g.yml:10: probes[0].request.grpc.stream.max_in_flight_per_stream: must be from 1 to 100000 (got 0)`},
		{"match on a server stream", "      url: grpc://127.0.0.1:1\n      grpc:\n        method: loadprobe.demo.v1.Target/Tick\n        stream: {kind: server, match: n}\n",
			`g.yml:9: probes[0].request.grpc.stream.match: applies to bidi streams: only their replies answer a message`},
		{"match on no field", echo + "        stream: {kind: bidi, messages_per_second: 10, match: id}\n",
			`g.yml:8: probes[0].request.grpc.method: grpc.stream.match: loadprobe.demo.v1.Request and loadprobe.demo.v1.Reply must both have a field "id"`},
		{"health", "      url: grpc://127.0.0.1:1\n      grpc:\n        health: \"\"\n        stream: {kind: server}\n",
			`g.yml:9: probes[0].request.grpc.stream: a health check is a unary call`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Parse("g.yml", []byte(grpcConfig(tc.lines)))
			if err == nil {
				t.Fatal("Parse accepted the config")
			}
			if !strings.Contains(err.Error(), tc.want) {
				t.Errorf("\n got: %s\nwant: %s", err, tc.want)
			}
		})
	}
	// A stream's level is streams: an open loop is an error.
	_, err := Parse("g.yml", []byte(strings.Replace(grpcConfig(echo+"        stream: {kind: bidi, messages_per_second: 10}\n"), "{concurrency: [1, 2]}", "{rate: [10]}", 1)))
	if want := `g.yml:4: probes[0].load: a stream probe's level is streams open at once: concurrency, or a search of concurrency`; err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("\n got: %v\nwant: %s", err, want)
	}
}
