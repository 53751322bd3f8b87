package transport

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/loadprobe/loadprobe/config/template"
	"github.com/loadprobe/loadprobe/plan"
	"github.com/loadprobe/loadprobe/prober/transport/h1"
)

// firstConn is one user's Conn on the transport of p's request, with the
// values the engine gives p's first attempt: index 1, the first data row.
func firstConn(tb testing.TB, p *plan.Probe) (Transport, Conn) {
	tb.Helper()
	t, _, err := Choose(context.Background(), p.Name, p.Request, false, nil)
	if err != nil {
		tb.Fatal(err)
	}
	vars := template.NewVars(0)
	vars.Index = 1
	if p.Rows != nil {
		vars.Row = p.Rows.Table.Row(0)
	}
	return t, t.NewConn(vars)
}

// clientKind names the client that t is, as clientPaths does.
func clientKind(t Transport) string {
	if _, fast := t.(*h1.Client); fast {
		return "fast"
	}
	return "std"
}

// demoProtoset is the demo service's committed descriptor set.
var demoProtoset, _ = filepath.Abs("../../demo/target/target.protoset")
