package main

import (
	"context"
	"log/slog"
	"os"
	"os/signal"
	"syscall"

	"github.com/loadprobe/loadprobe/demo/target"
)

// serveTarget is `loadprobe target`: the built-in demo target, until
// SIGINT or SIGTERM.
func serveTarget(listen string, opts target.Options, logger *slog.Logger) int {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	// Serve logs the address it listens on.
	err := target.Serve(ctx, listen, opts, logger, nil)
	if err != nil {
		logger.Error("Demo target failed", "err", err)
		return 1
	}
	return 0
}
