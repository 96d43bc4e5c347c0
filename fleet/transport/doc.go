// Package transport is fleetsim's MQTT plumbing: the embedded broker and the
// client factory.
package transport
