package transport

import (
	"context"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/types/known/emptypb"

	"github.com/loadprobe/loadprobe/config"
	"github.com/loadprobe/loadprobe/internal/testkit"
	"github.com/loadprobe/loadprobe/result"
)

// grpcAnswers are the ways a server can end a call, gRPC's and not: each
// writes one, chosen by the call's x-case metadata.
var grpcAnswers = map[string]func(w http.ResponseWriter){
	"ok": func(w http.ResponseWriter) { grpcReply(w, "application/grpc", "0") },
	"ok+proto": func(w http.ResponseWriter) {
		grpcReply(w, "application/grpc+proto", "0")
	},
	"unavailable": func(w http.ResponseWriter) { grpcReply(w, "application/grpc", "14") },
	"status past the known ones": func(w http.ResponseWriter) {
		grpcReply(w, "application/grpc", "99")
	},
	"status that is not a number": func(w http.ResponseWriter) {
		grpcReply(w, "application/grpc", "abc")
	},
	"trailers without a status": func(w http.ResponseWriter) { grpcReply(w, "application/grpc", "") },
	"trailers only": func(w http.ResponseWriter) {
		w.Header().Set("Content-Type", "application/grpc")
		w.Header().Set("Grpc-Status", "8")
		w.WriteHeader(200)
	},
	"no trailers": func(w http.ResponseWriter) {
		w.Header().Set("Content-Type", "application/grpc")
		w.Write([]byte{0, 0, 0, 0, 0})
	},
	"HTTP 503 of a proxy": func(w http.ResponseWriter) { http.Error(w, "overloaded", http.StatusServiceUnavailable) },
	"HTTP 404 of a proxy": func(w http.ResponseWriter) { http.Error(w, "no route", http.StatusNotFound) },
	"HTTP 200 of a web server": func(w http.ResponseWriter) {
		w.Header().Set("Content-Type", "text/html")
		w.Write([]byte("<p>hello</p>"))
	},
	"gRPC's content type with HTTP 503": func(w http.ResponseWriter) {
		w.Header().Set("Content-Type", "application/grpc")
		w.Header().Set("Grpc-Status", "5")
		w.WriteHeader(503)
	},
	"no content type": func(w http.ResponseWriter) { w.WriteHeader(200) },
	// OK trailers after a reply grpc-go will not read: a broken proxy or
	// serializer is no success.
	"a length past the receive bound": func(w http.ResponseWriter) {
		grpcMessage(w, []byte{0, 0xff, 0xff, 0xff, 0xff})
	},
	"compressed without an encoding": func(w http.ResponseWriter) {
		grpcMessage(w, []byte{1, 0, 0, 0, 0})
	},
}

// grpcMessage answers frame, a message as written on the wire, with OK
// trailers.
func grpcMessage(w http.ResponseWriter, frame []byte) {
	w.Header().Set("Content-Type", "application/grpc")
	w.Header().Set("Trailer", "Grpc-Status")
	w.Write(frame)
	w.Header().Set("Grpc-Status", "0")
}

// grpcReply answers one empty message with status in the trailers (none
// when "").
func grpcReply(w http.ResponseWriter, contentType, status string) {
	w.Header().Set("Content-Type", contentType)
	if status != "" {
		w.Header().Set("Trailer", "Grpc-Status")
	}
	w.Write([]byte{0, 0, 0, 0, 0})
	if status != "" {
		w.Header().Set("Grpc-Status", status)
	}
}

// grpcAnswering serves grpcAnswers over HTTP/2 without TLS (as a gRPC
// server speaks it, by prior knowledge) and returns its address.
func grpcAnswering(t *testing.T) string {
	t.Helper()
	s := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch answer := grpcAnswers[r.Header.Get("X-Case")]; {
		case answer != nil:
			answer(w)
		case r.Header.Get("X-Case") == "reset":
			panic(http.ErrAbortHandler) // RST_STREAM, INTERNAL_ERROR
		default:
			t.Errorf("no answer %q", r.Header.Get("X-Case"))
		}
	}))
	s.Config.Protocols = new(http.Protocols)
	s.Config.Protocols.SetUnencryptedHTTP2(true)
	s.Start()
	t.Cleanup(s.Close)
	return s.Listener.Addr().String()
}

// The lean client reads every answer as grpc-go, the reference, reads it:
// the same status, so the same code and outcome.
func TestGRPCReadsAnswersAsGRPCGo(t *testing.T) {
	addr := grpcAnswering(t)
	cc, err := grpc.NewClient("passthrough:///"+addr, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	defer cc.Close()
	for name := range grpcAnswers {
		t.Run(name, func(t *testing.T) {
			ctx := metadata.AppendToOutgoingContext(context.Background(), "x-case", name)
			err := cc.Invoke(ctx, "/loadprobe.demo.v1.Target/Noop", &emptypb.Empty{}, &emptypb.Empty{})
			want, wantO := result.GRPCStatus(uint32(status.Code(err))), result.HTTPError
			if err == nil {
				wantO = result.Success
			}
			code, o := leanCall(t, addr, name)
			if code != want || o != wantO {
				t.Errorf("lean client: %s %v; grpc-go: %s %v (%v)", code.String(), o, want.String(), wantO, err)
			}
		})
	}
	// A stream the server resets carries no status of the server's: grpc-go
	// makes INTERNAL of it with its own text, the lean client counts it
	// by the reason, as the HTTP clients do.
	ctx := metadata.AppendToOutgoingContext(context.Background(), "x-case", "reset")
	err = cc.Invoke(ctx, "/loadprobe.demo.v1.Target/Noop", &emptypb.Empty{}, &emptypb.Empty{})
	if !strings.Contains(status.Convert(err).Message(), "RST_STREAM") {
		t.Errorf("grpc-go: %v; want a stream reset", err)
	}
	if code, o := leanCall(t, addr, "reset"); code != (result.Code{}) || o != result.Reset {
		t.Errorf("lean client: %s %v; want a reset", code.String(), o)
	}
}

// leanCall makes one call with x-case set to answer on a gRPC probe's Conn.
func leanCall(t *testing.T, addr, answer string) (result.Code, result.Outcome) {
	t.Helper()
	req := testRequest("grpc://" + addr)
	req.GRPC = &config.GRPC{Method: "loadprobe.demo.v1.Target/Noop", Descriptors: demoProtoset, Connections: 1,
		Metadata: map[string]string{"x-case": answer}}
	c, conn := firstConn(t, compileProbe(t, config.Probe{Request: req}))
	defer c.Close()
	defer conn.Close()
	return conn.Do(time.Now().Add(5 * time.Second))
}

// A server that does not speak HTTP/2 answers what the client cannot read:
// other, as the HTTP clients count a response that is not HTTP.
func TestGRPCServerThatIsNotHTTP2(t *testing.T) {
	if code, o := leanCall(t, http1Answering(t), "ok"); code != (result.Code{}) || o != result.Other {
		t.Errorf("%s %v; want %v", code.String(), o, result.Other)
	}
}

// http1Answering answers any connection's first bytes as an HTTP/1.1
// server answers an HTTP/2 preface, and keeps the connection open until the
// client closes it (a close would race the client's reading of the answer
// with its next write).
func http1Answering(t *testing.T) string {
	return testkit.ServeLoopback(t, func(c net.Conn) {
		c.Read(make([]byte, 64))
		io.WriteString(c, "HTTP/1.1 400 Bad Request\r\nContent-Type: text/plain\r\n\r\n")
		io.Copy(io.Discard, c)
	})
}
