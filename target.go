package main

import (
	"context"
	"log/slog"
	"os"
	"os/signal"
	"syscall"

	"github.com/loadprobe/loadprobe/demo/target"
)

// serveTarget is `loadprobe target`: the built-in demo target, and its
// gRPC service when grpcListen is set, until SIGINT or SIGTERM or until
// one of them fails.
func serveTarget(listen, grpcListen string, opts target.Options, logger *slog.Logger) int {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	failed := make(chan error, 1)
	if grpcListen != "" {
		go func() {
			if err := target.ServeGRPC(ctx, grpcListen, opts, logger, nil); err != nil {
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
