package script

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"time"

	"go.starlark.net/lib/json"
	"go.starlark.net/starlark"
	"go.starlark.net/starlarkstruct"

	"github.com/loadprobe/loadprobe/config/template"
)

// predeclared are the names a script may use beyond the core language
// (docs/scripts.md, "Builtins"): nothing that reads a file, the clock or
// the network.
var predeclared = starlark.StringDict{
	"json": json.Module,
	"base64": &starlarkstruct.Module{Name: "base64", Members: starlark.StringDict{
		"encode": starlark.NewBuiltin("base64.encode", base64Encode),
		"decode": starlark.NewBuiltin("base64.decode", base64Decode),
	}},
	"hmac_sha256":   starlark.NewBuiltin("hmac_sha256", hmacSHA256),
	"sha256":        starlark.NewBuiltin("sha256", sha256Hex),
	"uuid":          starlark.NewBuiltin("uuid", uuid),
	"random_int":    starlark.NewBuiltin("random_int", randomInt),
	"random_string": starlark.NewBuiltin("random_string", randomString),
	"now":           starlark.NewBuiltin("now", now),
	"env":           starlark.NewBuiltin("env", env),
	"fail":          starlark.NewBuiltin("fail", fail),
}

// failure is the error fail(reason) stops a call with.
type failure struct{ reason string }

func (f *failure) Error() string { return "fail: " + f.reason }

func fail(_ *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	var reason string
	if err := starlark.UnpackPositionalArgs(b.Name(), args, kwargs, 1, &reason); err != nil {
		return nil, err
	}
	return nil, &failure{reason}
}

func oneString(b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (string, error) {
	var s string
	err := starlark.UnpackPositionalArgs(b.Name(), args, kwargs, 1, &s)
	return s, err
}

func base64Encode(_ *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	s, err := oneString(b, args, kwargs)
	return starlark.String(base64.StdEncoding.EncodeToString([]byte(s))), err
}

func base64Decode(_ *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	s, err := oneString(b, args, kwargs)
	if err != nil {
		return nil, err
	}
	d, err := base64.StdEncoding.DecodeString(s)
	if err != nil {
		return nil, fmt.Errorf("%s: %v", b.Name(), err)
	}
	return starlark.String(d), nil
}

func hmacSHA256(_ *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	var key, msg string
	if err := starlark.UnpackPositionalArgs(b.Name(), args, kwargs, 2, &key, &msg); err != nil {
		return nil, err
	}
	m := hmac.New(sha256.New, []byte(key))
	m.Write([]byte(msg))
	return starlark.String(hex.EncodeToString(m.Sum(nil))), nil
}

func sha256Hex(_ *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	s, err := oneString(b, args, kwargs)
	sum := sha256.Sum256([]byte(s))
	return starlark.String(hex.EncodeToString(sum[:])), err
}

func uuid(t *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	if err := starlark.UnpackPositionalArgs(b.Name(), args, kwargs, 0); err != nil {
		return nil, err
	}
	return starlark.String(template.AppendUUID(nil, stateOf(t).call.Rand)), nil
}

func randomInt(t *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	var lo, hi int64
	if err := starlark.UnpackPositionalArgs(b.Name(), args, kwargs, 2, &lo, &hi); err != nil {
		return nil, err
	}
	if hi < lo {
		return nil, fmt.Errorf("%s: %d is below %d", b.Name(), hi, lo)
	}
	return starlark.MakeInt64(template.RandomInt(stateOf(t).call.Rand, lo, hi)), nil
}

func randomString(t *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	var n int64
	if err := starlark.UnpackPositionalArgs(b.Name(), args, kwargs, 1, &n); err != nil {
		return nil, err
	}
	if n < 0 || n > template.MaxRandomString {
		return nil, fmt.Errorf("%s: a length from 0 to %d", b.Name(), template.MaxRandomString)
	}
	return starlark.String(template.AppendRandomString(nil, stateOf(t).call.Rand, n)), nil
}

func now(t *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	if err := starlark.UnpackPositionalArgs(b.Name(), args, kwargs, 0); err != nil {
		return nil, err
	}
	at := stateOf(t).call.At
	return starlark.Float(float64(at.UnixNano()) / float64(time.Second)), nil
}

func env(t *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	name, err := oneString(b, args, kwargs)
	if err != nil {
		return nil, err
	}
	v, ok := stateOf(t).program.env[name]
	if !ok {
		return nil, fmt.Errorf("%s: %q was not read at load: name the variable literally, env(\"NAME\")", b.Name(), name)
	}
	return starlark.String(v), nil
}
