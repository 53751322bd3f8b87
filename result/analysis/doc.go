// Package analysis judges a run: the three breaking points and their
// brackets, capacity, validity, the control check, the fitted Universal
// Scalability Law, and the diagnosis with its failure shapes (cliff, cap,
// depletion, collapse) and words. It reads a Result's steps, their codes
// by class (never by a protocol's numbers), and the probe's rules; it does
// no I/O.
package analysis
