// Package login holds the credentials of a fleetsim login, the part of the
// contract both sides of a connection need: the leader's username and the
// derivation of a worker's (or a gateway's) password from the fleet secret.
//
// The embedded broker (fleet/broker) checks logins with it and the clients
// (fleet/transport and the actors above it) present them; neither side
// imports the other for them. It imports nothing of fleetsim's.
//
//	co := transport.ClientOptions{ID: id, Username: id, Password: login.WorkerPassword(secret, id)}
//	lo := transport.ClientOptions{ID: "_leader-1", Username: login.LeaderUsername, Password: leaderPassword}
//
// docs/PROTOCOL.md states the same rules for a worker written in another
// language.
package login
