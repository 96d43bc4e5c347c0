// Package dash is the live terminal dashboard of a scenario run: a
// bubbletea program that shows the header (scenario, simulated time,
// speed, lag, next event; in a sweep, which variant of how many), the
// leader's mailbox, the relay's limits (AIMD or static), the outbox,
// every worker of the fleet as a cell, and an event log, and lets a
// person steer the run with the keyboard.
//
// The charts keep the whole run: every sample is folded into a history
// of at most a few hundred buckets (two merge into one as the run
// outgrows them), so the end screen shows the run from its start, and
// [ ] zoom and ← → pan over it.
//
// The model pulls a [result.Live] snapshot from a [Source] on a timer
// (every 100 ms by default) instead of being sent an update per event, so
// a busy run cannot flood the UI, and rendering costs the same however
// many events happened in between. Keys that change the run call
// [Controls]; a read-only source (a remote leader) passes nil and the keys
// are disabled.
//
//	err := dash.Run(ctx, runner, runner, dash.Options{})
//
// [Remote] is the source for a leader in another process ('sim dash'): it
// reads the leader's stats topic and the workers' retained statuses over
// MQTT, and shows what they carry, read-only.
//
//	r, err := dash.DialRemote(ctx, dash.RemoteOptions{Broker: "tcp://host:1883"})
//	defer r.Close()
//	err = dash.Run(ctx, r, nil, dash.Options{})
//
// While Run is up, the standard logger writes into the event pane (or
// into Options.Logs), never onto the terminal behind the UI.
package dash
