package main

import (
	"net/http"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/fleetsim/fleetsim/fleet/broker"
	"github.com/fleetsim/fleetsim/fleet/leader/control"
	"github.com/fleetsim/fleetsim/fleet/leader/promexport"
)

// metricsHandler serves the leader's metrics (promexport) plus the Go
// runtime's and the process's: ctl's deploy requests (nil: none), the
// newest deployHistory + promexport.DeploySeriesExtra deploys, and the
// embedded broker's TCP clients (brokerStats; nil: none).
func metricsHandler(src promexport.Source, ctl *control.Server, deployHistory int, brokerStats func() broker.Stats) http.Handler {
	o := promexport.Options{DeployHistory: deployHistory, Broker: brokerStats}
	if ctl != nil {
		o.Requests = ctl.Counts
	}
	reg := prometheus.NewRegistry()
	reg.MustRegister(promexport.New(src, o),
		collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	mux := http.NewServeMux()
	mux.Handle("/metrics", promhttp.HandlerFor(reg, promhttp.HandlerOpts{ErrorHandling: promhttp.ContinueOnError}))
	return mux
}
