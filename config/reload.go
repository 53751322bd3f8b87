package config

import (
	"log/slog"
	"sync"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/loadprobe/loadprobe/fleet"
)

// SafeConfig holds the running config and swaps it on reload.
type SafeConfig struct {
	mu sync.RWMutex
	c  *Config
	// Shard is the replica the config must suit, and ReadsFleet whether
	// it reads its fleet from Prometheus (CheckShard); set both before the
	// first load.
	Shard      fleet.Shard
	ReadsFleet bool

	configReloadSuccess prometheus.Gauge
	configReloadSeconds prometheus.Gauge
}

// NewSafeConfig returns an empty SafeConfig whose reload gauges are
// registered on reg (when reg is not nil).
func NewSafeConfig(reg prometheus.Registerer) *SafeConfig {
	sc := &SafeConfig{
		c: &Config{},
		configReloadSuccess: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "loadprobe_config_last_reload_successful",
			Help: "Whether the last configuration reload attempt was successful.",
		}),
		configReloadSeconds: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "loadprobe_config_last_reload_success_timestamp_seconds",
			Help: "Timestamp of the last successful configuration reload.",
		}),
	}
	if reg != nil {
		reg.MustRegister(sc.configReloadSuccess, sc.configReloadSeconds)
	}
	return sc
}

// ReloadConfig loads filename and, when it is valid, makes it the running
// config. When it is not, the running config stays, the success gauge goes
// to 0 and the error (every problem, file:line: path: message) is returned.
func (sc *SafeConfig) ReloadConfig(filename string, logger *slog.Logger) error {
	c, err := loadFile(filename, sc.Get())
	if err == nil {
		err = c.CheckShard(filename, sc.Shard, sc.ReadsFleet)
	}
	if err != nil {
		sc.configReloadSuccess.Set(0)
		if logger != nil {
			logger.Error("Error loading config", "file", filename, "err", err)
		}
		return err
	}
	sc.mu.Lock()
	sc.c = c
	sc.mu.Unlock()
	sc.configReloadSuccess.Set(1)
	sc.configReloadSeconds.SetToCurrentTime()
	if logger != nil {
		logger.Info("Loaded config file", "file", filename, "probes", len(c.Probes))
	}
	return nil
}

// Get returns the running config. Treat it as read-only: a reload replaces
// it whole, it never changes in place.
func (sc *SafeConfig) Get() *Config {
	sc.mu.RLock()
	defer sc.mu.RUnlock()
	return sc.c
}
