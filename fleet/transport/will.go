package transport

import "github.com/fleetsim/fleetsim/fleet/wire"

// LeaderWill is the last will a leader's session must carry: "offline",
// QoS 1 and retained, on the leader's status topic. The leader announces
// itself online once it serves and offline when it stops; a leader that
// dies without that goodbye (kill -9, a lost network) would otherwise
// leave its retained "online" behind for every reader of the topic.
func LeaderWill(tp wire.Topics) *Will {
	return &Will{Topic: tp.LeaderStatus(), Payload: []byte(wire.StatusOffline), QoS: 1, Retained: true}
}
