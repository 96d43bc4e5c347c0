// Package docs holds fleetsim's reference documents. SCENARIOS.md is built
// into the binaries, so that the tools say what the document says: `sim
// schema` takes the descriptions, defaults, enums and ranges of a
// scenario's keys from its tables.
package docs

import _ "embed"

// Scenarios is docs/SCENARIOS.md, the scenario format's reference.
//
//go:embed SCENARIOS.md
var Scenarios string
