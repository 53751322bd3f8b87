// Package script is the language of request scripts (docs/scripts.md):
// Starlark, sandboxed. config compiles a script when it loads; the engine
// calls it around each attempt through plan.Script. A script has no
// load, no file, clock or network access: only the builtins below, a
// step budget, a time bound and a memory bound per call.
package script

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"os"

	"go.starlark.net/starlark"
	"go.starlark.net/syntax"

	"github.com/loadprobe/loadprobe/plan"
)

// Program is a compiled script (plan.Script).
type Program struct {
	file          string
	before, after *starlark.Function
	vars          []string          // the names its functions assign in vars, in order
	env           map[string]string // the variables its env() calls name, read at load
}

// fileOptions allow while loops (the step budget bounds them) and nothing
// else beyond the core language: no recursion, no top-level control flow,
// no reassigned globals.
var fileOptions = &syntax.FileOptions{While: true}

var signatures = map[string]string{"before_request": "before_request(req, vars)", "after_response": "after_response(res, vars)"}

// loadBudget bounds the steps of a script's top level, run once at load.
const loadBudget = 1_000_000

// Compile compiles the script src read from file. An error names the
// script's file and line: a syntax error, a load statement, an env()
// whose variable is not set, a failing top level, or a script that
// defines neither before_request(req, vars) nor after_response(res, vars).
func Compile(file string, src []byte) (*Program, error) {
	f, err := fileOptions.Parse(file, src, 0)
	if err != nil {
		return nil, err
	}
	p := &Program{file: file, env: map[string]string{}}
	if err := p.inspect(f); err != nil {
		return nil, err
	}
	prog, err := starlark.FileProgram(f, predeclared.Has)
	if err != nil {
		return nil, err
	}
	thread := &starlark.Thread{Name: file}
	thread.SetMaxExecutionSteps(loadBudget)
	// The top level runs once, for no attempt: its now() is 0.
	thread.SetLocal("state", &state{program: p, call: &plan.ScriptCall{Rand: rand.New(rand.NewPCG(rand.Uint64(), rand.Uint64()))}})
	globals, err := prog.Init(thread, predeclared)
	if err != nil {
		return nil, failedAt(err)
	}
	globals.Freeze()
	for _, fn := range []struct {
		name string
		to   **starlark.Function
	}{{"before_request", &p.before}, {"after_response", &p.after}} {
		v, ok := globals[fn.name]
		if !ok {
			continue
		}
		f, ok := v.(*starlark.Function)
		if !ok || f.NumParams() != 2 {
			return nil, fmt.Errorf("%s: %s must be a function of two parameters, as %s", file, fn.name, signatures[fn.name])
		}
		*fn.to = f
	}
	if p.before == nil && p.after == nil {
		return nil, fmt.Errorf("%s: defines neither %s nor %s", file, signatures["before_request"], signatures["after_response"])
	}
	return p, nil
}

// inspect refuses a load statement, reads the environment variables the
// script's env() calls name, and collects the names its functions assign
// in their vars, which templates and later steps may read.
func (p *Program) inspect(f *syntax.File) error {
	var err error
	seen := map[string]bool{}
	syntax.Walk(f, func(n syntax.Node) bool {
		if err != nil {
			return false
		}
		switch n := n.(type) {
		case *syntax.LoadStmt:
			err = at(n, "load is not allowed: a script reads no other file")
		case *syntax.CallExpr:
			if name, ok := literalArg(n, "env"); ok {
				v, set := os.LookupEnv(name)
				if !set {
					err = at(n, fmt.Sprintf("environment variable %s is not set", name))
				}
				p.env[name] = v
			}
		case *syntax.DefStmt:
			if (n.Name.Name == "before_request" || n.Name.Name == "after_response") && len(n.Params) == 2 {
				if vars, ok := n.Params[1].(*syntax.Ident); ok {
					p.assigned(n.Body, vars.Name, seen)
				}
			}
		}
		return true
	})
	return err
}

// assigned collects the literal keys of the assignments to vars[...] in
// body.
func (p *Program) assigned(body []syntax.Stmt, vars string, seen map[string]bool) {
	for _, st := range body {
		syntax.Walk(st, func(n syntax.Node) bool {
			a, ok := n.(*syntax.AssignStmt)
			if !ok {
				return true
			}
			ix, ok := a.LHS.(*syntax.IndexExpr)
			if !ok {
				return true
			}
			id, ok := ix.X.(*syntax.Ident)
			lit, isLit := ix.Y.(*syntax.Literal)
			if ok && isLit && id.Name == vars && lit.Token == syntax.STRING {
				if name := lit.Value.(string); !seen[name] {
					seen[name] = true
					p.vars = append(p.vars, name)
				}
			}
			return true
		})
	}
}

// literalArg returns the string literal of a call of fn with one.
func literalArg(c *syntax.CallExpr, fn string) (string, bool) {
	id, ok := c.Fn.(*syntax.Ident)
	if !ok || id.Name != fn || len(c.Args) != 1 {
		return "", false
	}
	lit, ok := c.Args[0].(*syntax.Literal)
	if !ok || lit.Token != syntax.STRING {
		return "", false
	}
	return lit.Value.(string), true
}

// at is an error at n's position, file:line:col as Starlark's own.
func at(n syntax.Node, msg string) error {
	pos, _ := n.Span()
	return fmt.Errorf("%s: %s", pos, msg)
}

// failedAt is a Starlark evaluation error as the position in the script
// nearest to it (a builtin's frame has none) and its message.
func failedAt(err error) error {
	var ev *starlark.EvalError
	if !errors.As(err, &ev) {
		return err
	}
	for i := range ev.CallStack {
		if pos := ev.CallStack.At(i).Pos; pos.Filename() != "<builtin>" {
			return fmt.Errorf("%s: %s", pos, ev.Msg)
		}
	}
	return errors.New(ev.Msg)
}

// Vars names the variables the script's functions assign with a literal
// key (vars["token"] = ...), in the order they appear.
func (p *Program) Vars() []string { return p.vars }

func (p *Program) Before() bool { return p.before != nil }
func (p *Program) After() bool  { return p.after != nil }
