package grpc

import (
	"context"
	"io"
	"slices"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protodesc"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/types/descriptorpb"

	"github.com/loadprobe/loadprobe/config/template"
	"github.com/loadprobe/loadprobe/plan"
	"github.com/loadprobe/loadprobe/result"
)

// The schedule of a stream (docs/grpc.md, "Streams") on virtual time,
// against fake streams whose server answers as each test says: latency
// from the intended send time, a stall charged to every message in it,
// drops, timeouts, and streams opened again.

// server is what a fake stream's server does with a message sent at
// (virtual) time sent since the test's start: reply with msg at the time
// it returns (false: never).
type server func(msg []byte, sent time.Duration) (at time.Duration, answer bool)

// fakeStream is a grpc.ClientStream whose server is a function of time.
type fakeStream struct {
	ctx     context.Context
	start   time.Time
	serve   server
	replies chan []byte
	mu      sync.Mutex
	waiting int  // replies due
	closed  bool // CloseSend
	end     chan struct{}
	// tick, when set, makes it a server stream: its k-th message (from
	// 0) comes at tick(n, k) since the stream, the n-th opened (from 0),
	// opened; none after false.
	tick   func(n, k int) (time.Duration, bool)
	n      int
	ticked int
	opened time.Time
}

func (f *fakeStream) SendMsg(m any) error {
	if f.serve == nil {
		return nil // a server stream's request
	}
	msg := m.([]byte)
	at, ok := f.serve(msg, time.Since(f.start))
	if !ok {
		return nil
	}
	f.mu.Lock()
	f.waiting++
	f.mu.Unlock()
	time.AfterFunc(time.Until(f.start.Add(at)), func() {
		f.replies <- msg
	})
	return nil
}

func (f *fakeStream) RecvMsg(m any) error {
	if f.tick != nil {
		at, ok := f.tick(f.n, f.ticked)
		f.ticked++
		wait := time.NewTimer(time.Until(f.opened.Add(at)))
		defer wait.Stop()
		select {
		case <-wait.C:
			if ok {
				return nil
			}
			return io.EOF
		case <-f.ctx.Done():
			return status.FromContextError(f.ctx.Err()).Err()
		}
	}
	f.mu.Lock()
	done := f.closed && f.waiting == 0
	f.mu.Unlock()
	if done {
		return io.EOF
	}
	select {
	case b := <-f.replies:
		f.mu.Lock()
		f.waiting--
		f.mu.Unlock()
		if r, ok := m.(*reply); ok && r.field != 0 {
			r.key = key(b, r.field)
		}
		return nil
	case <-f.end:
		return io.EOF
	case <-f.ctx.Done():
		return status.FromContextError(f.ctx.Err()).Err()
	}
}

func (f *fakeStream) CloseSend() error {
	f.mu.Lock()
	f.closed = true
	f.mu.Unlock()
	return nil
}

func (f *fakeStream) Context() context.Context     { return f.ctx }
func (f *fakeStream) Header() (metadata.MD, error) { return nil, nil }
func (f *fakeStream) Trailer() metadata.MD         { return nil }

// observed are the messages a Run handed over.
type observed struct {
	mu      sync.Mutex
	msgs    []observedMessage
	dropped []time.Time
	opened  []result.Outcome
	ended   []result.Outcome
}

type observedMessage struct {
	o        result.Outcome
	from     time.Time
	finished time.Time
}

func (r *observed) Message(o result.Outcome, _ result.Code, from, finished time.Time) {
	r.mu.Lock()
	r.msgs = append(r.msgs, observedMessage{o, from, finished})
	r.mu.Unlock()
}

func (r *observed) Dropped(due time.Time) {
	r.mu.Lock()
	r.dropped = append(r.dropped, due)
	r.mu.Unlock()
}

func (r *observed) StreamOpened(o result.Outcome) {
	r.mu.Lock()
	r.opened = append(r.opened, o)
	r.mu.Unlock()
}

func (r *observed) StreamEnded(o result.Outcome, _ result.Code) {
	r.mu.Lock()
	r.ended = append(r.ended, o)
	r.mu.Unlock()
}

// latencies are the successes' latencies, in order of intended send time.
func (r *observed) latencies() []time.Duration {
	var l []time.Duration
	for _, m := range r.sorted() {
		if m.o == result.Success {
			l = append(l, m.finished.Sub(m.from))
		}
	}
	return l
}

func (r *observed) sorted() []observedMessage {
	return slices.SortedFunc(slices.Values(r.msgs), func(a, b observedMessage) int { return a.from.Compare(b.from) })
}

func (r *observed) count(o result.Outcome) (n int) {
	for _, m := range r.msgs {
		if m.o == o {
			n++
		}
	}
	return n
}

// streamCase is a stream probe's settings for a fake run.
type streamCase struct {
	stream  plan.GRPCStream
	timeout time.Duration
	// serve answers the messages of the stream opened n-th (from 0).
	serve func(n int) server
	// tick makes the streams server streams (fakeStream.tick).
	tick func(n, k int) (time.Duration, bool)
	// indexed sends {"n": {{index}}}, n from 1; else every message is
	// {"n": 7}.
	indexed bool
}

// run runs one stream for d under synctest and returns what it observed.
func (c streamCase) run(t *testing.T, d time.Duration) *observed {
	t.Helper()
	rec := &observed{}
	synctest.Test(t, func(t *testing.T) {
		start := time.Now()
		aborted, abort := context.WithCancel(context.Background())
		defer abort()
		s := &Streams{c: &Client{timeout: c.timeout, aborted: aborted}, plan: c.stream, live: rec}
		if c.stream.MessagesPerSecond > 0 {
			s.period = time.Duration(float64(time.Second) / c.stream.MessagesPerSecond)
		}
		if c.stream.Match != "" {
			s.sent, s.echoed = 1, 1
		}
		opened := 0
		s.newStream = func(ctx context.Context) (grpc.ClientStream, error) {
			f := &fakeStream{ctx: ctx, start: start, replies: make(chan []byte, 1<<16), end: make(chan struct{}), tick: c.tick, n: opened, opened: time.Now()}
			if c.serve != nil {
				f.serve = c.serve(opened)
			}
			opened++
			return f, nil
		}
		s.fixed = protowire.AppendVarint(protowire.AppendTag(nil, 1, protowire.VarintType), 7)
		st := &stream{s: s, timer: time.NewTimer(time.Hour), vars: template.NewVars(0)}
		if c.indexed {
			s.message, s.input = indexedMessage(t)
			s.c.call = &plan.GRPC{Message: s.message}
			st.next = func() { st.vars.Index++ }
		}
		st.Run(start.Add(d), rec)
		st.Close()
	})
	return rec
}

// echo answers every message after delay.
func echo(delay time.Duration) func(int) server {
	return func(int) server {
		return func(_ []byte, sent time.Duration) (time.Duration, bool) { return sent + delay, true }
	}
}

func TestStreamLatencyRunsFromTheIntendedSendTime(t *testing.T) {
	t.Parallel()
	rec := streamCase{
		stream:  plan.GRPCStream{Kind: plan.StreamBidi, MessagesPerSecond: 100, MaxInFlight: 100},
		timeout: time.Second,
		serve:   echo(2 * time.Millisecond),
	}.run(t, time.Second)
	l := rec.latencies()
	if len(l) != 100 || len(rec.msgs) != 100 {
		t.Fatalf("%d successes of %d messages in 1 s at 100/s, want 100", len(l), len(rec.msgs))
	}
	for i, d := range l {
		if d != 2*time.Millisecond {
			t.Fatalf("message %d took %v, want the server's 2ms", i, d)
		}
	}
	if len(rec.opened) != 1 || len(rec.ended) != 0 || len(rec.dropped) != 0 {
		t.Errorf("opened %v, ended %v, dropped %d; want one stream, kept, nothing dropped", rec.opened, rec.ended, len(rec.dropped))
	}
}

// stall answers after delay, but holds every reply due in [from, to)
// until to: a server that stops reading its stream for a while.
func stall(delay, from, to time.Duration) func(int) server {
	return func(int) server {
		return func(_ []byte, sent time.Duration) (time.Duration, bool) {
			at := sent + delay
			if at >= from && at < to {
				at = to + (sent-from)/1000 // held, in order
			}
			return at, true
		}
	}
}

func TestStreamStallIsChargedToEveryMessageScheduledInIt(t *testing.T) {
	t.Parallel()
	rec := streamCase{
		stream:  plan.GRPCStream{Kind: plan.StreamBidi, MessagesPerSecond: 100, MaxInFlight: 1000},
		timeout: 3 * time.Second,
		serve:   stall(2*time.Millisecond, time.Second, 2*time.Second),
	}.run(t, 5*time.Second)
	l := rec.latencies()
	if len(l) != 500 {
		t.Fatalf("%d successes in 5 s at 100/s, want 500 (dropped %d)", len(l), len(rec.dropped))
	}
	sorted := slices.Sorted(slices.Values(l))
	if p99 := sorted[len(sorted)*99/100-1]; p99 < 900*time.Millisecond {
		t.Errorf("p99 %v, want ≥ 0.9 s: the 1 s stall charged to the messages scheduled in it", p99)
	}
	// The first message of the stall waited the whole second; the last
	// hardly.
	if first := l[100]; first < 990*time.Millisecond || first > 1010*time.Millisecond {
		t.Errorf("the first stalled message took %v, want about 1 s", first)
	}
}

func TestStreamDropsMessagesBeyondMaxInFlight(t *testing.T) {
	t.Parallel()
	never := func(int) server { return func([]byte, time.Duration) (time.Duration, bool) { return 0, false } }
	rec := streamCase{
		stream:  plan.GRPCStream{Kind: plan.StreamBidi, MessagesPerSecond: 100, MaxInFlight: 10},
		timeout: time.Second,
		serve:   never,
	}.run(t, 500*time.Millisecond)
	if got := len(rec.dropped); got != 40 {
		t.Errorf("dropped %d of 50 scheduled with 10 in flight at most, want 40", got)
	}
	if got := rec.count(result.Timeout); got != 10 {
		t.Errorf("%d timeouts, want the 10 sent and never answered", got)
	}
	for _, m := range rec.msgs {
		if took := m.finished.Sub(m.from); took < time.Second {
			t.Errorf("a timeout after %v, want at least the 1 s timeout", took)
		}
	}
}

func TestStreamTimeoutEndsTheStreamAndOpensAnother(t *testing.T) {
	t.Parallel()
	// The first stream is never answered; the next ones are, in 2 ms.
	serve := func(n int) server {
		if n == 0 {
			return func([]byte, time.Duration) (time.Duration, bool) { return 0, false }
		}
		return echo(2 * time.Millisecond)(n)
	}
	rec := streamCase{
		stream:  plan.GRPCStream{Kind: plan.StreamBidi, MessagesPerSecond: 100, MaxInFlight: 100},
		timeout: 100 * time.Millisecond,
		serve:   serve,
	}.run(t, time.Second)
	if len(rec.opened) != 2 || !slices.Equal(rec.ended, []result.Outcome{result.Timeout}) {
		t.Fatalf("opened %v, ended %v; want two streams, the first ended by a timeout", rec.opened, rec.ended)
	}
	// Messages 0-10 went out on the first stream; message 0's timeout at
	// 100 ms was found when message 11 fell due, and ended them all.
	if got := rec.count(result.Timeout); got != 11 {
		t.Errorf("%d timeouts, want the 11 messages of the first stream", got)
	}
	if got := rec.count(result.Success); got != 89 {
		t.Errorf("%d successes, want the 89 of the second stream", got)
	}
}

func TestStreamMatchPairsRepliesOutOfOrder(t *testing.T) {
	t.Parallel()
	// Even messages are answered in 5 ms, odd ones in 1 ms: replies
	// overtake each other, and match pairs each with its own message.
	serve := func(int) server {
		return func(msg []byte, sent time.Duration) (time.Duration, bool) {
			v, _, _ := findField(msg, 1)
			n, _ := protowire.ConsumeVarint(v)
			if n%2 == 0 {
				return sent + 5*time.Millisecond, true
			}
			return sent + time.Millisecond, true
		}
	}
	rec := streamCase{
		stream:  plan.GRPCStream{Kind: plan.StreamBidi, MessagesPerSecond: 1000, MaxInFlight: 100, Match: "n"},
		timeout: time.Second,
		serve:   serve,
		indexed: true,
	}.run(t, 100*time.Millisecond)
	msgs := rec.sorted()
	if len(msgs) != 100 {
		t.Fatalf("%d messages, want 100", len(msgs))
	}
	for i, m := range msgs {
		want := time.Millisecond
		if (i+1)%2 == 0 {
			want = 5 * time.Millisecond
		}
		if took := m.finished.Sub(m.from); m.o != result.Success || took != want {
			t.Fatalf("message %d: %v in %v, want a success in %v", i+1, m.o, took, want)
		}
	}
}

// indexedMessage is the template {"n": {{index}}} and its message type,
// a Request of one int64 n.
func indexedMessage(t *testing.T) (*template.Template, protoreflect.MessageDescriptor) {
	fd, err := protodesc.NewFile(&descriptorpb.FileDescriptorProto{
		Name: proto.String("t.proto"), Package: proto.String("t"), Syntax: proto.String("proto3"),
		MessageType: []*descriptorpb.DescriptorProto{{Name: proto.String("Request"), Field: []*descriptorpb.FieldDescriptorProto{{
			Name: proto.String("n"), JsonName: proto.String("n"), Number: proto.Int32(1),
			Label: descriptorpb.FieldDescriptorProto_LABEL_OPTIONAL.Enum(), Type: descriptorpb.FieldDescriptorProto_TYPE_INT64.Enum(),
		}}}},
	}, nil)
	if err != nil {
		t.Fatal(err)
	}
	tmpl, err := template.Compile(`{"n": {{index}}}`, template.Body, template.Scope{})
	if err != nil {
		t.Fatal(err)
	}
	return tmpl, fd.Messages().Get(0)
}

func TestServerStreamTimesEachMessageFromTheOneBefore(t *testing.T) {
	t.Parallel()
	// A message every 5 ms, but the first stream falls silent after
	// 300 ms: at 500 ms the gap passes the 200 ms timeout, which ends the
	// stream, and the next one ticks anew.
	tick := func(n, k int) (time.Duration, bool) {
		at := time.Duration(k+1) * 5 * time.Millisecond
		if n == 0 && at > 300*time.Millisecond {
			at = time.Hour
		}
		return at, true
	}
	rec := streamCase{stream: plan.GRPCStream{Kind: plan.StreamServer, MaxInFlight: 100}, timeout: 200 * time.Millisecond, tick: tick}.run(t, 999*time.Millisecond)
	if len(rec.opened) != 2 || !slices.Equal(rec.ended, []result.Outcome{result.Timeout}) {
		t.Fatalf("opened %v, ended %v; want a second stream after the first timed out", rec.opened, rec.ended)
	}
	// 60 messages to 300 ms, the timeout at 500 ms, then one every 5 ms
	// from 505 to 995 ms.
	if got, timeouts := rec.count(result.Success), rec.count(result.Timeout); got != 159 || timeouts != 1 {
		t.Errorf("%d messages and %d timeouts, want 159 and 1", got, timeouts)
	}
	for i, d := range rec.latencies() {
		if d != 5*time.Millisecond {
			t.Fatalf("message %d came %v after the one before, want 5ms", i, d)
		}
	}
}

func TestClientStreamMessagesLeaveOnSchedule(t *testing.T) {
	t.Parallel()
	rec := streamCase{
		stream:  plan.GRPCStream{Kind: plan.StreamClient, MessagesPerSecond: 1000, MaxInFlight: 100},
		timeout: time.Second,
		serve:   func(int) server { return func([]byte, time.Duration) (time.Duration, bool) { return 0, false } },
	}.run(t, time.Second)
	if got := rec.count(result.Success); got != 1000 || len(rec.msgs) != 1000 {
		t.Errorf("%d messages sent of %d, want 1000 at 1000/s for 1 s", got, len(rec.msgs))
	}
	for i, d := range rec.latencies() {
		if d != 0 {
			t.Fatalf("message %d left %v after its time, want on time", i, d)
		}
	}
}
