package h2

import (
	"encoding/binary"

	"golang.org/x/net/http2"
)

// The server's SETTINGS and WINDOW_UPDATE frames: what the client may send.

func (r *reader) settings(flags byte, id uint32, p []byte) error {
	switch {
	case id != 0:
		return ConnectionError(http2.ErrCodeProtocol)
	case flags&flagAck != 0 && len(p) > 0, len(p)%6 != 0:
		return ConnectionError(http2.ErrCodeFrameSize)
	case flags&flagAck != 0:
		return nil
	}
	for ; len(p) > 0; p = p[6:] {
		s := http2.Setting{ID: http2.SettingID(binary.BigEndian.Uint16(p)), Val: binary.BigEndian.Uint32(p[2:])}
		if err := s.Valid(); err != nil {
			code := http2.ErrCodeProtocol
			if ce, ok := err.(http2.ConnectionError); ok {
				code = http2.ErrCode(ce)
			}
			return ConnectionError(code)
		}
		r.apply(s)
	}
	r.c.control(func(fr *http2.Framer) error { return fr.WriteSettingsAck() })
	return nil
}

func (r *reader) apply(s http2.Setting) {
	c := r.c
	c.mu.Lock()
	defer c.mu.Unlock()
	switch s.ID {
	case http2.SettingMaxConcurrentStreams:
		c.maxStreams = int(s.Val)
		c.signalSlot()
	case http2.SettingInitialWindowSize:
		delta := int64(s.Val) - c.peerWindow
		c.peerWindow = int64(s.Val)
		for _, st := range c.streams {
			st.sendWindow += delta
			wake(st)
		}
	case http2.SettingMaxFrameSize:
		c.peerFrame = int(s.Val)
	}
}

func (r *reader) windowUpdate(id uint32, p []byte) error {
	if len(p) != 4 {
		return ConnectionError(http2.ErrCodeFrameSize)
	}
	incr := int64(binary.BigEndian.Uint32(p) & maxStreamID)
	c := r.c
	c.mu.Lock()
	defer c.mu.Unlock()
	if id == 0 {
		if incr == 0 {
			return ConnectionError(http2.ErrCodeProtocol)
		}
		c.sendWindow += incr
		if c.sendWindow > maxStreamID {
			return ConnectionError(http2.ErrCodeFlowControl)
		}
		for _, st := range c.streams {
			wake(st)
		}
		return nil
	}
	s := c.streams[id]
	switch {
	case s == nil:
		return nil
	case incr == 0:
		r.resetLocked(s, http2.ErrCodeProtocol, nil)
	case s.sendWindow+incr > maxStreamID:
		r.resetLocked(s, http2.ErrCodeFlowControl, nil)
	default:
		s.sendWindow += incr
		wake(s)
	}
	return nil
}

// wake tells a stream waiting to send its body that its window grew.
func wake(s *stream) {
	select {
	case s.window <- struct{}{}:
	default:
	}
}
