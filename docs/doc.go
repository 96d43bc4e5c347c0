// Package docs holds fleetsim's reference documents, and the tests that
// keep them true to the code: the package table in README.md, the
// generated references (the scenario keys, the result's names) and the
// commands they show.
package docs
