package prober

import (
	"context"
	"testing"
	"time"

	"github.com/loadprobe/loadprobe/demo/target"
)

// BenchmarkGRPCCall is one unary call of a gRPC probe's Conn against the
// demo service's Noop on loopback: what the client cost per attempt, the
// engine left out, with the grpc-go server's cost beside it (its
// allocations count: it runs in this process).
func BenchmarkGRPCCall(b *testing.B) {
	addr := grpcServer(b, target.New(target.Options{}).RegisterGRPC)
	p := grpcProbe(b, "grpc://"+addr, `method: loadprobe.demo.v1.Target/Noop
descriptors: `+demoProtoset, `concurrency: [1]`)
	c, err := newWorkload(context.Background(), p, nil)
	if err != nil {
		b.Fatal(err)
	}
	defer c.close()
	conn := attempter{c.newUser()}
	b.ReportAllocs()
	for b.Loop() {
		if _, o := conn.Do(time.Now().Add(time.Second)); o != 0 {
			b.Fatalf("outcome %v", o)
		}
	}
}
