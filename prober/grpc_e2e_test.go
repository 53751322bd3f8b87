package prober

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/health"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/metadata"
	rpb "google.golang.org/grpc/reflection/grpc_reflection_v1"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/descriptorpb"

	"github.com/loadprobe/loadprobe/config"
	"github.com/loadprobe/loadprobe/demo/target"
	"github.com/loadprobe/loadprobe/internal/testkit"
	"github.com/loadprobe/loadprobe/plan"
	"github.com/loadprobe/loadprobe/result"
)

// End to end against the demo target's gRPC service on loopback
// (docs/grpc.md): the ramps, the outcomes and the diagnosis a user reads.

var (
	grpcOK                = result.GRPCStatus(0)
	grpcUnavailable       = result.GRPCStatus(14)
	grpcResourceExhausted = result.GRPCStatus(8)
)

// demoProtoset is the demo service's committed descriptor set.
var demoProtoset, _ = filepath.Abs("../demo/target/target.protoset")

// grpcServer serves a gRPC server on loopback with register's services and
// returns its address.
func grpcServer(t testing.TB, register func(*grpc.Server), opts ...grpc.ServerOption) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s := grpc.NewServer(opts...)
	register(s)
	go func() { _ = s.Serve(ln) }()
	t.Cleanup(s.Stop)
	return ln.Addr().String()
}

// grpcDemo serves a fresh demo target's gRPC service.
func grpcDemo(t *testing.T, opts target.Options, sopts ...grpc.ServerOption) string {
	return grpcServer(t, target.New(opts).RegisterGRPC, sopts...)
}

// grpcProbe is a gRPC probe of url with the grpc section and the load given.
func grpcProbe(t testing.TB, url, grpcSection, load string) *plan.Probe {
	t.Helper()
	return probeWith(t, url, "      grpc:\n"+indent(grpcSection, "        ")+"\n", load)
}

func runGRPC(t *testing.T, p *plan.Probe) result.Result {
	t.Helper()
	r := mustRun(t, context.Background(), p, Options{})
	logRun(t, r)
	return r
}

// logRun logs each step of r and its diagnosis.
func logRun(t *testing.T, r result.Result) {
	t.Helper()
	for _, s := range r.Steps {
		t.Logf("level %g: %d attempts, goodput %.0f/s, latency p50 %.2fms p99 %.2fms, in flight %.2f, responses %v, errors %v, per second %v",
			s.Level, s.Attempts, s.Goodput, 1e3*s.Latency.P50, 1e3*s.Latency.P99, s.InFlight, s.Responses.Named(), s.Errors, s.PerSecond)
	}
	t.Logf("diagnosis:\n%s", diagnosis(r))
}

// Work holds one of 4 workers for 80ms: 50 calls/s at most, reached at 4
// in flight. On virtual time, with the statuses the demo service answers.
func TestGRPCWorkRampFindsTheKneeAtThePoolSize(t *testing.T) {
	t.Parallel()
	p := grpcProbe(t, "grpc://127.0.0.1:1", `method: loadprobe.demo.v1.Target/Work
message: '{"n": 7}'`, `concurrency: [1, 2, 4, 8, 16]
step_duration: 5s
warmup: 200ms`)
	r := simRun(t, p, Options{}, demo(target.Options{Workers: 4, WorkTime: 80 * time.Millisecond}))
	logRun(t, r)
	if r.Ended != result.ResultCompleted || len(r.Steps) != 5 {
		t.Fatalf("result %s with levels %v; want 5 completed (%s)", r.Ended, levels(r), r.Error)
	}
	if k := r.BreakingPoints.Knee; k == nil || k.Level != 4 {
		t.Errorf("knee %+v, want 4 in flight", k)
	}
	if !within(r.PeakThroughput, 50, 0.10) {
		t.Errorf("peak %.1f/s, want within 10%% of 50/s", r.PeakThroughput)
	}
	for _, s := range r.Steps {
		if s.Responses[grpcOK] != s.Attempts || s.ErrorRatio != 0 {
			t.Errorf("level %g: responses %v of %d attempts; want every call OK", s.Level, s.Responses.Named(), s.Attempts)
		}
		if !within(s.InFlight, s.Level, 0.10) {
			t.Errorf("level %g: Little's-law in flight %.2f, want the level", s.Level, s.InFlight)
		}
	}
	if r.BreakingPoints.FirstFailure != nil {
		t.Errorf("first failure %+v on a service that never fails", r.BreakingPoints.FirstFailure)
	}
}

// The method is called alike whether the server is asked by reflection
// or the descriptors come from a protoset: 4 in flight on Work's 4
// workers of 20ms, at most 200 calls/s, every call OK.
func TestGRPCReflectionAndProtosetCallTheSameMethod(t *testing.T) {
	t.Parallel()
	addr := grpcDemo(t, target.Options{Workers: 4, WorkTime: 20 * time.Millisecond})
	for _, desc := range []string{"reflection", demoProtoset} {
		t.Run(filepath.Base(desc), func(t *testing.T) {
			t.Parallel()
			p := grpcProbe(t, "grpc://"+addr, `method: loadprobe.demo.v1.Target/Work
message: '{"n": 7}'
descriptors: `+desc, `concurrency: [4]
step_duration: 1s`)
			r := runGRPC(t, p)
			s := r.Steps[0]
			if r.Ended != result.ResultCompleted || s.Attempts == 0 || s.Responses[grpcOK] != s.Attempts {
				t.Fatalf("result %s (%s), responses %v of %d attempts; want every call OK", r.Ended, r.Error, s.Responses.Named(), s.Attempts)
			}
			// Two probes share the 4 workers; neither passes their 200/s.
			if s.Goodput > 200 {
				t.Errorf("goodput %.0f/s, past the workers' 200/s", s.Goodput)
			}
		})
	}
}

// A rate ramp over Work's 2 workers of 10ms (200 calls/s): within budget
// up to 150/s, past it at 300/s, where the queue grows.
func TestGRPCRateRampBreaksPastTheCapacity(t *testing.T) {
	t.Parallel()
	p := grpcProbe(t, "grpc://127.0.0.1:1", `method: loadprobe.demo.v1.Target/Work
message: '{"n": {{index}}}'`, `rate: [50, 100, 150, 300]
step_duration: 2s`)
	r := simRun(t, p, Options{}, demo(target.Options{Workers: 2, WorkTime: 10 * time.Millisecond}))
	logRun(t, r)
	if len(r.Steps) != 4 {
		t.Fatalf("levels %v (%s %s); want 4", levels(r), r.Ended, r.Error)
	}
	lb := r.BreakingPoints.LatencyBudget
	if lb == nil || lb.Level != 300 {
		t.Errorf("latency-budget breaking point %+v, want 300/s", lb)
	}
	if c := r.Capacity; c == nil || c.Level != 150 || !within(c.Throughput, 150, 0.05) {
		t.Errorf("capacity %+v, want 150/s at 150/s", c)
	}
	for _, s := range r.Steps[:3] {
		if s.ErrorRatio != 0 || !within(s.Goodput, s.Level, 0.05) {
			t.Errorf("rate %g: goodput %.1f/s, error ratio %g; want every call OK at the rate", s.Level, s.Goodput, s.ErrorRatio)
		}
	}
}

// Shed answers UNAVAILABLE above 8 in flight: the first failure is at 16,
// named as shedding. On virtual time, as the naming is judgement: on real
// sockets beside the race detector's other tests, 10% of the calls at 4
// in flight once outlasted their 1s timeout.
func TestGRPCShedIsNamedShedding(t *testing.T) {
	t.Parallel()
	p := grpcProbe(t, "grpc://127.0.0.1:1", `method: loadprobe.demo.v1.Target/Shed
message: '{}'`, `concurrency: [4, 8, 16]
step_duration: 1s`)
	p.Abort.ErrorRatio = 1
	r := simRun(t, p, Options{}, demo(target.Options{}))
	logRun(t, r)
	if ff := r.BreakingPoints.FirstFailure; ff == nil || ff.Level != 16 {
		t.Fatalf("first failure %+v, want 16 in flight", ff)
	}
	s := r.Steps[2]
	if s.Responses[grpcUnavailable] == 0 || s.Responses[grpcUnavailable]+s.Responses[grpcOK] != s.Attempts {
		t.Errorf("level 16: responses %v, errors %v of %d attempts; want the failures UNAVAILABLE", s.Responses.Named(), s.Errors, s.Attempts)
	}
	if d := diagnosis(r); !strings.Contains(d, "UNAVAILABLE on") || !strings.Contains(d, "(shedding: capacity ran out)") {
		t.Errorf("diagnosis does not name UNAVAILABLE as shedding:\n%s", d)
	}
}

var pinnedGRPC = regexp.MustCompile(`successes pinned near ([0-9.]+)/s while RESOURCE_EXHAUSTED statuses took the rest: a rate limit, not a capacity .*RESOURCE_EXHAUSTED: a limiter declining on purpose`)

// Limited answers RESOURCE_EXHAUSTED above 400 per wall-clock second: a
// limiter, its rate named. The run starts half-way into a second, as the
// HTTP shape tests do, on virtual time.
func TestGRPCLimitedIsNamedALimiter(t *testing.T) {
	t.Parallel()
	p := grpcProbe(t, "grpc://127.0.0.1:1", `method: loadprobe.demo.v1.Target/Limited
message: '{"n": 1}'`, `concurrency: [4]
step_duration: 5s`)
	p.Abort.ErrorRatio = 1
	r := simRun(t, p, Options{}, func() http.Handler {
		halfWayIntoASecond()
		return target.New(target.Options{})
	})
	logRun(t, r)
	s := r.Steps[0]
	if s.Responses[grpcResourceExhausted] == 0 || s.Responses[grpcUnavailable] != 0 {
		t.Errorf("responses %v; want RESOURCE_EXHAUSTED and no UNAVAILABLE", s.Responses.Named())
	}
	m := pinnedGRPC.FindStringSubmatch(diagnosis(r))
	if m == nil {
		t.Fatalf("no limiter named:\n%s", diagnosis(r))
	}
	if v, _ := strconv.ParseFloat(m[1], 64); !within(v, target.LimitedRate, 0.05) {
		t.Errorf("cap named at %v/s, want near %d/s", v, target.LimitedRate)
	}
}

// A call that outlasts the client's timeout is a timeout, whether the
// client's deadline fired or the server, which grpc-go told the
// deadline, answered DEADLINE_EXCEEDED first; the successes' latency
// stays under the timeout, which it moves with.
func TestGRPCDeadlineIsATimeout(t *testing.T) {
	t.Parallel()
	addr := grpcDemo(t, target.Options{Workers: 1, WorkTime: 30 * time.Millisecond})
	for _, timeout := range []time.Duration{50 * time.Millisecond, 100 * time.Millisecond} {
		t.Run(timeout.String(), func(t *testing.T) {
			t.Parallel()
			p := grpcProbe(t, "grpc://"+addr, `method: loadprobe.demo.v1.Target/Work`, `concurrency: [8]
step_duration: 1s`)
			p.Request.Timeout = time.Duration(timeout)
			r := runGRPC(t, p)
			s := r.Steps[0]
			if s.Errors["timeout"] == 0 || s.Errors["timeout"]+s.Responses[grpcOK] != s.Attempts {
				t.Errorf("responses %v, errors %v of %d attempts; want the calls OK or timeouts", s.Responses.Named(), s.Errors, s.Attempts)
			}
			if s.Responses[result.GRPCStatus(4)] != 0 {
				t.Errorf("%d DEADLINE_EXCEEDED counted as responses; want them timeouts", s.Responses[result.GRPCStatus(4)])
			}
			// An answer the worker reads past the deadline is late, however
			// early the wire brought it.
			if s.Latency.Max >= timeout.Seconds() {
				t.Errorf("slowest success %.2fms, not within the %v timeout", 1e3*s.Latency.Max, timeout)
			}
		})
	}
}

// A closed port is refused, every call, with the descriptors at hand; by
// reflection the run cannot resolve its method and fails before any load.
func TestGRPCClosedPortIsRefused(t *testing.T) {
	t.Parallel()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	p := grpcProbe(t, "grpc://"+addr, `method: loadprobe.demo.v1.Target/Noop
descriptors: `+demoProtoset, `concurrency: [2]
step_duration: 500ms`)
	r := runGRPC(t, p)
	if s := r.Steps[0]; s.Attempts == 0 || s.Errors["refused"] != s.Attempts {
		t.Errorf("%d attempts, errors %v, responses %v; want every call refused", s.Attempts, s.Errors, s.Responses.Named())
	}
	p = grpcProbe(t, "grpc://"+addr, `method: loadprobe.demo.v1.Target/Noop`, `concurrency: [2]`)
	if _, err := Run(context.Background(), p, Options{}); err == nil || !strings.Contains(err.Error(), "grpc method loadprobe.demo.v1.Target/Noop: asking the server by reflection") {
		t.Errorf("Run by reflection against a closed port: %v; want the method unresolved", err)
	}
}

// A method the server does not have, by reflection, fails the run at its
// start and says why.
func TestGRPCReflectionNamesAMissingMethod(t *testing.T) {
	t.Parallel()
	addr := grpcDemo(t, target.Options{})
	for method, want := range map[string]string{
		"loadprobe.demo.v1.Target/Nope": "service loadprobe.demo.v1.Target has no method Nope",
		"other.Service/Call":            "other.Service",
	} {
		p := grpcProbe(t, "grpc://"+addr, "method: "+method, `concurrency: [1]`)
		_, err := Run(context.Background(), p, Options{})
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: %v; want an error naming %q", method, err, want)
		}
	}
}

// A server without reflection (as a grpcio server is unless told) fails the
// run at its start with what to do instead: a descriptor set, and the
// protoc line that writes one.
func TestGRPCWithoutReflectionSuggestsAProtoset(t *testing.T) {
	t.Parallel()
	addr := grpcServer(t, func(s *grpc.Server) { healthpb.RegisterHealthServer(s, health.NewServer()) })
	p := grpcProbe(t, "grpc://"+addr, "method: loadprobe.demo.v1.Target/Noop", `concurrency: [1]`)
	_, err := Run(context.Background(), p, Options{})
	for _, want := range []string{"does not serve reflection", "descriptors: FILE.protoset", "protoc --include_imports --descriptor_set_out=FILE.protoset"} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("Run against a server without reflection: %v; want %q", err, want)
		}
	}
}

// hugeReflection answers every reflection stream with an error whose text
// is 3 MiB: text a server chooses.
type hugeReflection struct {
	rpb.UnimplementedServerReflectionServer
}

func (hugeReflection) ServerReflectionInfo(rpb.ServerReflection_ServerReflectionInfoServer) error {
	return status.Error(codes.Internal, strings.Repeat("x", 3<<20))
}

// A run that fails on a reason the server wrote keeps a few KiB of it, cut
// with a mark: the result is served and stored after every run.
func TestGRPCFailureReasonIsBounded(t *testing.T) {
	t.Parallel()
	addr := grpcServer(t, func(s *grpc.Server) { rpb.RegisterServerReflectionServer(s, hugeReflection{}) })
	p := grpcProbe(t, "grpc://"+addr, "method: loadprobe.demo.v1.Target/Noop", `concurrency: [1]`)
	r := Runner(Run).WithControl(context.Background(), p, Options{}, nil)
	if r.Ended != result.ResultFailed || !strings.Contains(r.Error, "asking the server by reflection") {
		t.Fatalf("result %s: %.200s; want failed by reflection", r.Ended, r.Error)
	}
	if len(r.Error) > result.MaxReasonBytes || !strings.HasSuffix(r.Error, "bytes cut]") {
		t.Errorf("the reason is %d bytes, ending %q; want at most %d, cut with a mark", len(r.Error), r.Error[max(0, len(r.Error)-30):], result.MaxReasonBytes)
	}
}

// chainReflection answers every file asked for with one of almost 4 MB
// (its comments) that imports the next, without end.
type chainReflection struct {
	rpb.UnimplementedServerReflectionServer
}

func (chainReflection) ServerReflectionInfo(s rpb.ServerReflection_ServerReflectionInfoServer) error {
	comment := strings.Repeat("x", 3900<<10)
	for i := 0; ; i++ {
		if _, err := s.Recv(); err != nil {
			return err
		}
		fd := &descriptorpb.FileDescriptorProto{
			Name:       proto.String(fmt.Sprintf("f%d.proto", i)),
			Dependency: []string{fmt.Sprintf("f%d.proto", i+1)},
			SourceCodeInfo: &descriptorpb.SourceCodeInfo{Location: []*descriptorpb.SourceCodeInfo_Location{
				{LeadingComments: proto.String(comment)}}},
		}
		b, err := proto.Marshal(fd)
		if err != nil {
			return err
		}
		if err := s.Send(&rpb.ServerReflectionResponse{MessageResponse: &rpb.ServerReflectionResponse_FileDescriptorResponse{
			FileDescriptorResponse: &rpb.FileDescriptorResponse{FileDescriptorProto: [][]byte{b}}}}); err != nil {
			return err
		}
	}
}

// A reflection service that answers a chain of large files is read up to
// a bound in bytes, not files (1 000 files of 3.9 MB held 1.9-3.3 GB at
// every run start): the run fails at its start, and names the way out.
func TestGRPCReflectionIsBoundedInBytes(t *testing.T) {
	t.Parallel()
	addr := grpcServer(t, func(s *grpc.Server) { rpb.RegisterServerReflectionServer(s, chainReflection{}) })
	p := grpcProbe(t, "grpc://"+addr, "method: loadprobe.demo.v1.Target/Noop", `concurrency: [1]`)
	_, err := Run(context.Background(), p, Options{})
	if err == nil || !strings.Contains(err.Error(), "descriptors pass 16 MiB") {
		t.Errorf("Run against a chain of 3.9 MB files: %v; want the byte bound named", err)
	}
}

// A call whose metadata renders above the 16 MiB bound with its row's
// values (a 17 MiB cell: the check at load counts values for nothing) is
// not sent, and counts as request_too_large, as an HTTP request does.
func TestGRPCCallAboveTheSizeBoundIsNotSent(t *testing.T) {
	t.Parallel()
	data := filepath.Join(t.TempDir(), "pad.csv")
	testkit.WriteFile(t, data, "pad\n"+strings.Repeat("x", 17<<20)+"\n")
	addr := grpcDemo(t, target.Options{})
	p := probeWith(t, "grpc://"+addr, "      grpc:\n        method: loadprobe.demo.v1.Target/Noop\n        descriptors: "+demoProtoset+
		"\n        metadata: {x-pad: \"{{.pad}}\"}\n    data: {file: "+data+"}\n", "concurrency: [1]\nstep_duration: 300ms")
	r := runGRPC(t, p)
	if s := r.Steps[0]; s.Attempts == 0 || s.Errors["request_too_large"] != s.Attempts || len(s.Responses) != 0 {
		t.Errorf("%d attempts, errors %v, responses %v; want every call left unsent as request_too_large", s.Attempts, s.Errors, s.Responses.Named())
	}
}

// silentReflection takes every reflection stream and never answers.
type silentReflection struct {
	rpb.UnimplementedServerReflectionServer
}

func (silentReflection) ServerReflectionInfo(s rpb.ServerReflection_ServerReflectionInfoServer) error {
	<-s.Context().Done()
	return s.Context().Err()
}

// The pause switch stops a run while it waits on a reflection service that
// never answers: within a second, aborted by the pause, with no load sent.
func TestGRPCPauseStopsReflection(t *testing.T) {
	t.Parallel()
	addr := grpcServer(t, func(s *grpc.Server) { rpb.RegisterServerReflectionServer(s, silentReflection{}) })
	p := grpcProbe(t, "grpc://"+addr, "method: loadprobe.demo.v1.Target/Noop", `concurrency: [2, 4]`)
	ctx, stop := context.WithCancelCause(context.Background())
	time.AfterFunc(200*time.Millisecond, func() { stop(&result.Stop{Abort: result.Abort{By: result.ByPause}}) })
	start := time.Now()
	r := Runner(Run).WithControl(ctx, p, Options{}, nil)
	took := time.Since(start)
	if took > 1200*time.Millisecond {
		t.Errorf("the run ended %s after it started, 200ms of it before the pause: want within a second of it", took)
	}
	if r.Ended != result.ResultAborted || r.Abort == nil || r.Abort.By != result.ByPause || r.Abort.Level != 2 || len(r.Steps) != 0 {
		t.Errorf("result %s, abort %+v, %d steps: want aborted by pause at level 2, no step (%s)", r.Ended, r.Abort, len(r.Steps), r.Error)
	}
}

// The health shorthand calls grpc.health.v1.Health/Check: SERVING is a
// success, NOT_SERVING a failure with its own code, an unknown service
// the server's NOT_FOUND.
func TestGRPCHealthCountsNotServingAsFailure(t *testing.T) {
	t.Parallel()
	hs := health.NewServer()
	hs.SetServingStatus("up", healthpb.HealthCheckResponse_SERVING)
	hs.SetServingStatus("down", healthpb.HealthCheckResponse_NOT_SERVING)
	addr := grpcServer(t, func(s *grpc.Server) { healthpb.RegisterHealthServer(s, hs) })
	for service, code := range map[string]result.Code{"up": grpcOK, "down": result.GRPCNotServing, "gone": result.GRPCStatus(5)} {
		p := grpcProbe(t, "grpc://"+addr, "health: "+service, `rate: [50]
step_duration: 500ms`)
		r := runGRPC(t, p)
		s := r.Steps[0]
		if s.Attempts == 0 || s.Responses[code] != s.Attempts {
			t.Errorf("%s: responses %v of %d attempts; want all %s", service, s.Responses.Named(), s.Attempts, code.String())
		}
		if fails := code != grpcOK; fails != (s.ErrorRatio == 1) {
			t.Errorf("%s: error ratio %g", service, s.ErrorRatio)
		}
	}
}

// The message and the metadata are written per call from their templates
// and the probe's data; the credentials go as authorization metadata.
func TestGRPCTemplatesAndCredentials(t *testing.T) {
	t.Parallel()
	type seen struct{ auth, tenant, msg string }
	calls := make(chan seen, 1000)
	record := grpc.UnaryInterceptor(func(ctx context.Context, req any, _ *grpc.UnaryServerInfo, h grpc.UnaryHandler) (any, error) {
		md, _ := metadata.FromIncomingContext(ctx)
		b, _ := protojson.Marshal(req.(proto.Message))
		select {
		case calls <- seen{strings.Join(md["authorization"], ","), strings.Join(md["x-tenant"], ","), strings.ReplaceAll(string(b), " ", "")}:
		default:
		}
		return h(ctx, req)
	})
	addr := grpcDemo(t, target.Options{}, record)
	rows := filepath.Join(t.TempDir(), "rows.csv")
	if err := os.WriteFile(rows, []byte("tenant,n\na,5\nb,6\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	yml := fmt.Sprintf(`allowed_targets: ["127.0.0.1"]
probes:
  - name: p
    data: {file: %s}
    request:
      url: grpc://%s
      bearer_token: s3cret
      grpc:
        method: loadprobe.demo.v1.Target/Noop
        message: '{"n": {{.n}}}'
        metadata: {x-tenant: "{{.tenant}}"}
    load: {concurrency: [1], step_duration: 300ms}
`, rows, addr)
	cfg, err := config.Parse("test.yml", []byte(yml))
	if err != nil {
		t.Fatal(err)
	}
	r := runGRPC(t, cfg.Plans()[0])
	if s := r.Steps[0]; s.Attempts == 0 || s.Responses[grpcOK] != s.Attempts {
		t.Fatalf("responses %v of %d attempts; want every call OK", s.Responses.Named(), s.Attempts)
	}
	close(calls)
	got := map[seen]int{}
	for c := range calls {
		got[c]++
	}
	for _, want := range []seen{{"Bearer s3cret", "a", `{"n":"5"}`}, {"Bearer s3cret", "b", `{"n":"6"}`}} {
		if got[want] == 0 {
			t.Errorf("no call %+v; the server saw %v", want, got)
		}
	}
	if len(got) != 2 {
		t.Errorf("the server saw %v; want the two rows' calls only", got)
	}
}
