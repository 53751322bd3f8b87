package config

import (
	"crypto/sha256"
	"encoding/hex"
)

// Hash identifies the config file this config was parsed from: the first
// 16 hex digits of its SHA-256, the same for every replica of a fleet that
// reads one file, and different when a byte of it differs (docs/fleet.md,
// "Fleet figures (replica 0)"). It covers the config file alone, not the
// data or body files it names. Empty for a config not parsed from a file.
func (c *Config) Hash() string { return c.hash }

func hashOf(data []byte) string {
	sum := sha256.Sum256(data)
	return hex.EncodeToString(sum[:8])
}
