// Package result owns what a run found: the Result and Step types the
// engine fills and everyone else only reads (run's table and JSON, the
// collector, the status page, the store, the fleet), their vocabulary
// (modes, run results, rules, quantiles, units), and the judgement of a
// run: the three breaking points, capacity, validity, the control check
// and the diagnosis with its failure shapes (cliff, cap, depletion,
// collapse). It does no I/O.
package result
