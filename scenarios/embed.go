// Package scenarios holds the scenario files shipped with fleetsim, built
// into the sim binary so `sim run wave-deploy` and `sim list` work from any
// directory. docs/SCENARIOS.md documents the format.
package scenarios

import "embed"

// FS holds the shipped scenario files (*.yaml).
//
//go:embed *.yaml
var FS embed.FS
