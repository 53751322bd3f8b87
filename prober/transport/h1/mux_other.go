//go:build !linux

package h1

import (
	"errors"

	"github.com/loadprobe/loadprobe/prober/transport/internal/wire"
)

// NewMux needs epoll: elsewhere the open loop keeps its senders.
func (c *Client) NewMux() (wire.Mux, error) { return nil, errors.ErrUnsupported }
