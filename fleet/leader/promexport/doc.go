// Package promexport exports a leader's numbers as Prometheus metrics:
// the fleetsim_* series the leader binary serves on /metrics. A Collector
// reads leader.Stats, FleetView and DeploySummaries at each scrape, so
// /metrics shows the numbers the stats topic shows (one source of
// numbers).
//
// A series that counts what a scenario run's metric counts takes its name
// and help text from the run's registry (fleet/result: Metric.Prom and
// PromHelp), so a dashboard and a scenario's report name the same thing
// alike; the series only a running leader has are described in this
// package's table (descs.go).
//
//	reg := prometheus.NewRegistry()
//	reg.MustRegister(promexport.New(l, promexport.Options{DeployHistory: 20}))
//	http.Handle("/metrics", promhttp.HandlerFor(reg, promhttp.HandlerOpts{}))
//
// Only the binaries import it.
package promexport
