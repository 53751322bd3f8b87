// Package schedule decides when each configured probe runs, and keeps the
// results.
//
// It owns:
//   - the loop of each probe: a run at start, then every
//     schedule.interval plus jitter, back to back when continuous, after
//     failedRetry when a continuous run fails, and at once on Trigger; a
//     reload (Apply) cancels the runs of changed and removed probes only;
//   - admission: a run waits until no other run holds any of
//     its hosts (a name, and every address it resolves to) and its load fits
//     under max_concurrency and max_rate, first come first served (probes
//     due together in the order of the file), and its
//     state says what it waits for;
//   - each probe's state (state.Probe: the run under way, the last finished
//     run, the last completed one), which the collector, the status page and
//     /api/v1/results read;
//   - the store, which keeps the last finished runs across
//     restarts, with each scheduled probe's history of runs.
//     A canceled run (shutdown, reload) is never the last run, never
//     stored;
//   - the run log: a line per scheduled run, and a continuous
//     probe's runs summed up once a minute.
//
// It sends no load itself: it calls the prober.Runner given to New (Options.Run)
// (prober.Run in the daemon, a fake in its tests) through
// Runner.WithControl.
package schedule
