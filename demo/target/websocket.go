package target

import (
	"io"
	"net/http"
	"sync"
	"time"

	"github.com/gorilla/websocket"
)

// TargetWSSessions is how many sessions /ws-limited holds at once; it
// closes any beyond with 1013 "try again later".
const TargetWSSessions = 8

// wsMaxMessage bounds a message the target echoes.
const wsMaxMessage = 1 << 20

// wsUpgrader accepts any origin: the target serves loopback load only. A
// request that is no upgrade is answered 400 by Upgrade.
var wsUpgrader = websocket.Upgrader{ReadBufferSize: 4096, WriteBufferSize: 4096, CheckOrigin: func(*http.Request) bool { return true }}

// serveWS upgrades r to a session that echoes every message, until the
// client closes it or the target stops. limited: the session is refused
// with 1013 when TargetWSSessions are already open.
func (t *Target) serveWS(w http.ResponseWriter, r *http.Request, limited bool) {
	s, err := wsUpgrader.Upgrade(w, r, nil)
	if err != nil {
		return
	}
	defer s.Close()
	if limited {
		// The count drops before the close frame leaves, so a client that
		// reopens on 1013 finds the place of a session that ended.
		if t.wsSessions.Add(1) > TargetWSSessions {
			t.wsSessions.Add(-1)
			msg := websocket.FormatCloseMessage(websocket.CloseTryAgainLater, "try again later")
			_ = s.WriteControl(websocket.CloseMessage, msg, time.Now().Add(time.Second))
			return
		}
		// The place is freed once: before the answer to a client's close
		// leaves (so that client may open another at once), or when the
		// session ends otherwise.
		var release sync.Once
		free := func() { release.Do(func() { t.wsSessions.Add(-1) }) }
		defer free()
		answer := s.CloseHandler()
		s.SetCloseHandler(func(code int, text string) error {
			free()
			return answer(code, text)
		})
	}
	if !t.ws.hold(s) {
		return
	}
	defer t.ws.release(s)
	s.SetReadLimit(wsMaxMessage)
	for {
		typ, in, err := s.NextReader()
		if err != nil {
			return
		}
		out, err := s.NextWriter(typ)
		if err != nil {
			return
		}
		if _, err := io.Copy(out, in); err != nil {
			return
		}
		if err := out.Close(); err != nil {
			return
		}
	}
}

// wsOpen holds a target's open sessions, so that Serve closes them before
// it returns: http.Server.Shutdown does not wait for a hijacked connection.
// Closed later, from a goroutine of its own, a session could still echo
// after Serve returned.
type wsOpen struct {
	mu      sync.Mutex
	stopped bool
	conns   map[*websocket.Conn]struct{}
}

// hold adds s to the sessions open; false once the target has stopped.
func (o *wsOpen) hold(s *websocket.Conn) bool {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.stopped {
		return false
	}
	if o.conns == nil {
		o.conns = make(map[*websocket.Conn]struct{})
	}
	o.conns[s] = struct{}{}
	return true
}

func (o *wsOpen) release(s *websocket.Conn) {
	o.mu.Lock()
	defer o.mu.Unlock()
	delete(o.conns, s)
}

// closeAll closes every session open, and stops holding new ones.
func (o *wsOpen) closeAll() {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.stopped = true
	for s := range o.conns {
		_ = s.Close()
	}
}
