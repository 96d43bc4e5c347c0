// Package wording holds the small text helpers that the scenario format's
// and the expectations' error messages share: suggestions for a misspelt
// name (DidYouMean) and lists in prose (List). It imports nothing of
// fleetsim.
package wording
