package config

import (
	"crypto/sha256"
	"net/url"

	commoncfg "github.com/prometheus/common/config"

	"github.com/loadprobe/loadprobe/config/script"
	"github.com/loadprobe/loadprobe/internal/regularfile"
)

// maxScriptSize bounds a script file: it is read and compiled at load.
const maxScriptSize = 1 << 20

// script reads and compiles r's script at p, relative to dir, and adds its
// text to the request's sum (a reload with a changed script is another
// probe). A script rewrites HTTP requests: not a WebSocket session's or a
// gRPC call's (docs/scripts.md).
func (v *validator) script(r *Request, parts *requestParts, p keyPath, dir string) *script.Program {
	if u, err := url.Parse(r.URL); r.GRPC != nil || err == nil && u.Scheme != "http" && u.Scheme != "https" {
		v.errorf(p, "a script rewrites HTTP requests: not a gRPC call's or a WebSocket session's")
		return nil
	}
	file := commoncfg.JoinDir(dir, r.Script)
	src, err := regularfile.Read(file, maxScriptSize)
	if err != nil {
		v.errorf(p, "%v", err)
		return nil
	}
	prog, err := script.Compile(file, src)
	if err != nil {
		v.errorf(p, "%v", err)
		return nil
	}
	r.Script = file
	parts.sum = sha256.Sum256(append(parts.sum[:], src...))
	return prog
}
