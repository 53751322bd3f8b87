package main

import (
	"fmt"
	"io"
	"text/tabwriter"

	"github.com/loadprobe/loadprobe/plan"
	"github.com/loadprobe/loadprobe/result"
)

// writeFlowSteps prints a flow probe's per-step block: for each level, a
// row per step of the flow (nothing for a single-request probe).
func writeFlowSteps(w io.Writer, r result.Result, lq result.Quantile) {
	if len(r.Steps) == 0 || len(r.Steps[0].Flow) == 0 {
		return
	}
	fmt.Fprintln(w, "flow steps:")
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	first := r.Words().Unit()
	if r.Mode == plan.ModePhases {
		first = "phase"
	}
	fmt.Fprintf(tw, "%s\tstep\tattempts\tmean\t%s\terror ratio\tcodes\terrors\t\n", first, lq.Label)
	for _, s := range r.Steps {
		lvl := plan.FormatLevel(s.Level)
		if s.Name != "" {
			lvl = s.Name
		}
		for _, fs := range s.Flow {
			fmt.Fprintf(tw, "%s\t%s\t%d\t%s\t%s\t%.2f%%\t%s\t%s\t\n",
				lvl, fs.Name, fs.Attempts, ms(fs.Latency.Mean), ms(lq.Of(fs.Latency)), 100*fs.ErrorRatio,
				result.Counts(fs.Responses.Named()), result.Counts(fs.Errors))
		}
	}
	tw.Flush()
}
