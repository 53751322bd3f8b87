// Package target is loadprobe's built-in demo target (`loadprobe target`,
// `loadprobe demo`): an http.Handler whose paths reproduce what loadprobe
// measures, each with a known answer: a worker-pool knee (/work), shedding
// above a fixed number in flight (/shed), a rate cap (/limited), a depleting
// resource (/leak), slow answers (/slow, /delay?ms=N) and any status code
// (/status?code=N). The engine's measuring tests and the end-to-end tests run
// against it, and `loadprobe demo` probes it.
package target
