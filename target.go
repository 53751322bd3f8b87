package main

import (
	"context"
	"log/slog"
	"os"
	"os/signal"
	"syscall"

	"github.com/loadprobe/loadprobe/demo/target"
)

// serveTarget is `loadprobe target`: the built-in demo target, its gRPC
// service when grpcListen is set and its HTTP/3 when h3Listen is, until
// SIGINT or SIGTERM or until one of them fails.
func serveTarget(listen, grpcListen, h3Listen string, opts target.Options, logger *slog.Logger) int {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	failed := make(chan error, 2)
	for _, side := range []struct {
		listen string
		serve  serveFunc
	}{{grpcListen, target.ServeGRPC}, {h3Listen, target.ServeH3}} {
		if side.listen == "" {
			continue
		}
		go func() {
			if err := side.serve(ctx, side.listen, opts, logger, nil); err != nil {
				failed <- err
				cancel()
			}
		}()
	}
	// Serve logs the address it listens on.
	err := target.Serve(ctx, listen, opts, logger, nil)
	select {
	case err = <-failed:
	default:
	}
	if err != nil {
		logger.Error("Demo target failed", "err", err)
		return 1
	}
	return 0
}
