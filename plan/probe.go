package plan

// Probe is a probe as the engine runs it (see the package doc). Its
// sections are the config's; Request, Flow and Rows are its compiled
// workload.
type Probe struct {
	Name  string
	Load  Load
	Rules Rules
	Abort Abort
	Guard Guard
	// Telemetry is what to read of the target's own Prometheus; nil
	// without one.
	Telemetry *Telemetry
	Control   string
	Expect    Expect
	Schedule  Schedule
	// Compare is the rules of a comparison of Candidate with Request, its
	// baseline; both nil without one (docs/compare.md).
	Compare   *Compare
	Candidate *Request
	// Request is what each attempt sends; for a flow, its first step's:
	// the host the scheduler keeps exclusive.
	Request *Request
	// Flow is a flow's steps, in order; nil for a single request.
	Flow []FlowStep
	// Rows are the data file's rows; nil without one.
	Rows *Rows
	// Vars names the values each user carries from one attempt (or step)
	// to the next, in the order of template.Vars.Captured: a flow's
	// captures, and the variables its scripts set (docs/scripts.md).
	Vars []string

	// fingerprint tells a probe from another without comparing rows or
	// descriptors (Same).
	fingerprint [32]byte
}

// New returns a probe whose settings, files and data have the fingerprint
// given: two probes compiled from the same ones are the Same.
func New(p Probe, fingerprint [32]byte) *Probe {
	p.fingerprint = fingerprint
	return &p
}

// Same reports whether p and q are one probe: the same settings, and files
// of the same content. A reload keeps the runs of a probe that stays the
// same.
func (p *Probe) Same(q *Probe) bool { return p.fingerprint == q.fingerprint }
