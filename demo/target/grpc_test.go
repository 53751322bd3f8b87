package target

import (
	"bytes"
	"flag"
	"os"
	"testing"
)

var updateProtoset = flag.Bool("update", false, "rewrite target.protoset from the service's descriptor")

// target.protoset is what a probe's grpc.descriptors names for the demo
// service (docs/grpc.md, "Descriptors"); it must describe the service the
// target serves. go test ./demo/target -run TestProtoset -update
// rewrites it.
func TestProtosetMatchesTheService(t *testing.T) {
	want := Protoset()
	if *updateProtoset {
		if err := os.WriteFile("target.protoset", want, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	got, err := os.ReadFile("target.protoset")
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Fatalf("target.protoset (%d bytes) does not match the service's descriptor (%d bytes): go test ./demo/target -run TestProtoset -update", len(got), len(want))
	}
}
