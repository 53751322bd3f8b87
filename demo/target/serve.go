package target

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/netip"
	"strings"
	"time"
)

// Serve serves a new demo target on addr until ctx is done, then stops
// within a second; it returns nil when stopped by ctx. addr must name a
// loopback host (127.0.0.0/8, ::1 or localhost): the demo target is load to
// be aimed at, never to be reachable from elsewhere. ready, when not nil, is
// called with the bound address once the listener accepts connections, so
// "127.0.0.1:0" can be used. A nil logger logs nothing.
func Serve(ctx context.Context, addr string, opts Options, logger *slog.Logger, ready func(net.Addr)) error {
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	if err := checkTargetAddr(addr); err != nil {
		return err
	}
	if ctx.Err() != nil {
		return nil
	}
	ln, err := new(net.ListenConfig).Listen(ctx, "tcp", addr)
	if err != nil {
		return fmt.Errorf("demo target: %w", err)
	}
	if ta, ok := ln.Addr().(*net.TCPAddr); !ok || !ta.IP.IsLoopback() {
		_ = ln.Close()
		return fmt.Errorf("demo target: %q bound %s, which is not a loopback address", addr, ln.Addr())
	}
	t := New(opts)
	srv := &http.Server{
		Handler:           t,
		ReadHeaderTimeout: 10 * time.Second,
		IdleTimeout:       2 * time.Minute,
		// Requests see ctx end, so waits (/slow, /delay, a /work queue) stop at once.
		BaseContext: func(net.Listener) context.Context { return ctx },
		ErrorLog:    slog.NewLogLogger(logger.Handler(), slog.LevelError),
	}
	work := "sleep"
	if t.cpu {
		work = "cpu"
	}
	logger.Info("demo target listening", "address", ln.Addr().String(),
		"workers", t.workers, "work_time", t.workTime, "work", work)
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ln) }()
	if ready != nil {
		ready(ln.Addr())
	}
	select {
	case err := <-served:
		return fmt.Errorf("demo target: %w", err)
	case <-ctx.Done():
	}
	sctx, cancel := context.WithTimeout(context.Background(), targetShutdownGrace)
	defer cancel()
	if err := srv.Shutdown(sctx); err != nil {
		_ = srv.Close()
	}
	t.ws.closeAll()
	if err := <-served; err != nil && !errors.Is(err, http.ErrServerClosed) {
		return fmt.Errorf("demo target: %w", err)
	}
	logger.Info("demo target stopped", "address", ln.Addr().String())
	return nil
}

// checkTargetAddr accepts host:port listen addresses whose host is loopback.
func checkTargetAddr(addr string) error {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return fmt.Errorf("demo target: listen address %q: %w", addr, err)
	}
	if strings.EqualFold(host, "localhost") {
		return nil
	}
	if ip, err := netip.ParseAddr(host); err == nil && ip.Unmap().IsLoopback() {
		return nil
	}
	return fmt.Errorf("demo target: listen address %q is not loopback (use 127.0.0.1, ::1 or localhost)", addr)
}
