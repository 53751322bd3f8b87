package prober

import (
	"sync/atomic"

	"github.com/loadprobe/loadprobe/config/template"
	"github.com/loadprobe/loadprobe/plan"
)

// varSource gives the attempts (or iterations) of a run their values: the
// next index, and the next row of the probe's data.
type varSource struct {
	next atomic.Uint64
	rows *template.Rows // nil without data
}

func newVarSource(p *plan.Probe) *varSource {
	s := &varSource{}
	if r := p.Rows; r != nil && r.Table.Len() > 0 {
		s.rows = template.NewRows(r.Table, r.Random)
	}
	return s
}

func (s *varSource) index(v *template.Vars) { v.Index = s.next.Add(1) }

func (s *varSource) row(v *template.Vars) {
	if s.rows != nil {
		v.Row = s.rows.Take()
	}
}

// attempt gives v the values of a plain probe's next attempt, which is an
// iteration of its own.
func (s *varSource) attempt(v *template.Vars) {
	s.index(v)
	s.row(v)
}
