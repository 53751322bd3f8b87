package target

import (
	"sync"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/types/dynamicpb"
)

// The demo service's streams (docs/grpc.md, "The demo service"): Echo
// answers every message of a bidi stream with its n, each after the wait
// of a Work call (one of --workers slots for --work-time), so a stream's
// messages queue for the pool as calls do and its replies may come out of
// order (a probe pairs them by n: match: n); Tick sends n messages a
// second (10 when n is not above 0, at most 10 000), numbered from 1, on
// a schedule of its own, until the client leaves.

// maxTickRate bounds Tick's messages per second.
const maxTickRate = 10_000

func (t *Target) grpcStreams() []grpc.StreamDesc {
	return []grpc.StreamDesc{
		{StreamName: "Echo", Handler: t.echo, ServerStreams: true, ClientStreams: true},
		{StreamName: "Tick", Handler: tick, ServerStreams: true},
	}
}

// echo answers each message of the stream in a goroutine of its own,
// after the pool's wait, until the client ends its side and every answer
// is sent.
func (t *Target) echo(_ any, s grpc.ServerStream) error {
	var sending sync.Mutex // a stream sends from one goroutine at a time
	var answers sync.WaitGroup
	var failed error
	for {
		req := dynamicpb.NewMessage(grpcRequest)
		if err := s.RecvMsg(req); err != nil {
			answers.Wait()
			return failed // the client's end (EOF), or a broken stream
		}
		answers.Go(func() {
			if !t.work(s.Context().Done()) {
				return
			}
			sending.Lock()
			defer sending.Unlock()
			if err := s.SendMsg(reply(req.Get(grpcN).Int())); err != nil {
				failed = err
			}
		})
	}
}

// tick sends numbered replies at the rate the request asks for.
func tick(_ any, s grpc.ServerStream) error {
	req := dynamicpb.NewMessage(grpcRequest)
	if err := s.RecvMsg(req); err != nil {
		return err
	}
	rate := req.Get(grpcN).Int()
	if rate <= 0 {
		rate = 10
	}
	period := time.Second / time.Duration(min(rate, maxTickRate))
	start := time.Now()
	timer := time.NewTimer(period)
	defer timer.Stop()
	for n := int64(1); ; n++ {
		timer.Reset(time.Until(start.Add(time.Duration(n) * period)))
		select {
		case <-s.Context().Done():
			return nil
		case <-timer.C:
		}
		if err := s.SendMsg(reply(n)); err != nil {
			return err
		}
	}
}

// reply is a Reply of n.
func reply(n int64) *dynamicpb.Message {
	r := dynamicpb.NewMessage(grpcReply)
	if n != 0 {
		r.Set(grpcReplyN, protoreflect.ValueOfInt64(n))
	}
	return r
}
