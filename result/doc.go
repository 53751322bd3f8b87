// Package result owns what a run found: the Result and Step types the
// engine fills and everyone else only reads (run's table and JSON, the
// collector, the status page, the store, the fleet), and their
// vocabulary: run results, rules, quantiles, the codes of responses and
// their classes, the outcomes of attempts. What a run means is package
// analysis's. It does no I/O.
package result
