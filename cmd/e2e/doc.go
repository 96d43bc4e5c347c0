// Package e2e tests the leader and worker binaries as separate processes:
// built with go build, talking over TCP through the leader's embedded
// broker or Mosquitto, stopped with SIGTERM (and SIGKILL). It has no code
// of its own; see e2e_test.go.
package e2e
