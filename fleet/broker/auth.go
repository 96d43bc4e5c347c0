package broker

import (
	"crypto/hmac"
	"crypto/subtle"
	"errors"
	"fmt"
	"strings"

	"github.com/fleetsim/fleetsim/fleet/wire"
)

// MinSecretLen is the shortest fleet secret Auth accepts (128 bits).
const MinSecretLen = 16

// Auth is the broker's login and topic policy for one fleet.
//
// The leader logs in as wire.LeaderUsername with LeaderPassword and may
// publish and subscribe to anything under the fleet's prefix. Its rights
// come from that login, whatever its client id ('leader run' picks a random
// one per process, starting with "_", which no worker id does).
//
// A worker logs in with its id as both MQTT client id and username (the id
// must pass wire.ValidWorkerID). Its password is one of two:
//
//   - a range credential's, wire.Credentials.Password: "<range>:<mac>".
//     The broker recomputes the range key from the range the password
//     names (wire.RangeKey) and checks the MAC, and that the range admits
//     the login (wire.DeviceRange.Admits). This is what a worker host
//     holds ('leader credentials' issues it): it logs in as the ids of its
//     range and no other;
//   - wire.WorkerPassword(Secret, id), for a process that holds the fleet
//     secret itself (the leader's own, sim): it can log in as anyone.
//
// A worker may publish only to its own up and status topics, subscribe
// only to its own down topic and the read-only control topics
// (<prefix>/_control/#), and its last will, if any, must be on its own
// status topic.
//
// A gateway (one session carrying many devices, see wire.GatewayUsername)
// logs in with the username "gateway/<gateway id>/<device range>" as both
// username and client id, with either password above made for that whole
// username: the password vouches for the range as much as for the id. A
// range credential must cover the gateway's devices and name the gateway
// after one of them (wire.DeviceRange.Admits). Since no worker id has a
// "/", a gateway's session and a worker's can never take each other over.
// A gateway may publish to the up and status topics of the devices in its
// range and to its own gateway status topic (wire.Topics.GatewayStatus),
// subscribe to its devices' down topics and the control topics, and its
// last will, if any, must be on its own gateway status topic.
//
// Nothing else logs in: not other usernames, not a worker or a gateway
// whose client id differs from its username. Topics outside the prefix
// (including $SYS) are closed to everyone. A login is decided before the
// broker looks at the session already connected with the same client id:
// a refused one leaves it alone, an accepted one takes it over (MQTT's
// rule).
type Auth struct {
	// LeaderPassword is the leader's password; required.
	LeaderPassword string
	// Secret is the fleet secret that worker passwords are derived from;
	// at least MinSecretLen bytes.
	Secret []byte
	// Topics gives the fleet's prefix (zero value: wire.DefaultPrefix).
	Topics wire.Topics
}

func (a *Auth) validate() error {
	if a.LeaderPassword == "" {
		return errors.New("broker: Auth.LeaderPassword is empty; the leader needs a password")
	}
	if len(a.Secret) < MinSecretLen {
		return fmt.Errorf("broker: Auth.Secret is %d bytes; want at least %d random bytes", len(a.Secret), MinSecretLen)
	}
	if p := a.Topics.Prefix; strings.ContainsAny(p, "/+#") || strings.HasPrefix(p, "$") {
		return fmt.Errorf("broker: Auth.Topics.Prefix %q: want one topic level without / + # and not starting with $", p)
	}
	return nil
}

// policy is an Auth compiled for the hot path: it is consulted on every
// publish and every delivery and allocates nothing there.
type policy struct {
	topics   wire.Topics
	prefix   string // "fleet"
	control  string // "fleet/_control/"
	gateways string // "fleet/_gateway/": before a gateway's id in its status topic
	leaderPw []byte
	secret   []byte
}

func newPolicy(a *Auth) *policy {
	p := &policy{topics: a.Topics, prefix: a.Topics.Prefix}
	if p.prefix == "" {
		p.prefix = wire.DefaultPrefix
	}
	p.control = a.Topics.Control("")
	p.gateways = strings.TrimSuffix(a.Topics.GatewayStatus(""), "/"+wire.ChanStatus)
	p.leaderPw = []byte(a.LeaderPassword)
	p.secret = append([]byte(nil), a.Secret...)
	return p
}

// login is what a CONNECT asks for.
type loginReq struct {
	clientID, username string
	password           []byte
	willTopic          string // "" if no will
}

// check decides a login; reason is empty when it is accepted.
func (p *policy) check(l loginReq) (reason string) {
	if l.username == wire.LeaderUsername {
		if subtle.ConstantTimeCompare(l.password, p.leaderPw) != 1 {
			return "wrong leader password"
		}
		if l.willTopic != "" && !p.underPrefix(l.willTopic) {
			return fmt.Sprintf("will topic %q is outside the fleet prefix %q", l.willTopic, p.prefix)
		}
		return ""
	}
	if wire.IsGatewayUsername(l.username) {
		return p.checkGateway(l)
	}
	if err := wire.ValidWorkerID(l.username); err != nil {
		return fmt.Sprintf("username is neither %q, a gateway's nor a valid worker id: %v", wire.LeaderUsername, err)
	}
	if l.clientID != l.username {
		return fmt.Sprintf("client id %q differs from username %q; a worker uses its id for both", l.clientID, l.username)
	}
	if reason := p.checkPassword(l.username, l.password, "worker"); reason != "" {
		return reason
	}
	if l.willTopic != "" && !p.isWorkerTopic(l.willTopic, l.username, wire.ChanStatus) {
		return fmt.Sprintf("will topic %q: a worker's will must be on its own status topic %q",
			l.willTopic, p.topics.Status(l.username))
	}
	return ""
}

// checkPassword checks the password of a worker's or a gateway's login
// (what: "worker" or "gateway"); reason is empty when it is right.
func (p *policy) checkPassword(username string, password []byte, what string) (reason string) {
	r, isRange, err := wire.ParseRangePassword(string(password))
	switch {
	case err != nil:
		return fmt.Sprintf("%s %v", what, err)
	case !isRange:
		if !hmac.Equal(password, []byte(wire.WorkerPassword(p.secret, username))) {
			return fmt.Sprintf("wrong %s password (want a range credential's \"<range>:<mac>\", or the hex HMAC-SHA256 of the username under the fleet secret)", what)
		}
		return ""
	}
	if err := r.Admits(username); err != nil {
		return fmt.Sprintf("%s password of a credential for %s: %v", what, r, err)
	}
	cred := wire.Credentials{Range: r, Key: wire.RangeKey(p.secret, r)}
	if !hmac.Equal(password, []byte(cred.Password(username))) {
		return fmt.Sprintf("wrong %s password for a credential of range %s (not issued under this fleet's secret)", what, r)
	}
	return ""
}

// allowed reports whether a logged-in client may publish to (write), or
// subscribe to and receive from (!write), topic: a topic name or filter.
func (p *policy) allowed(username, clientID, topic string, write bool) bool {
	if username == wire.LeaderUsername {
		return p.underPrefix(topic)
	}
	if wire.IsGatewayUsername(username) {
		return p.gatewayAllowed(username, clientID, topic, write)
	}
	if write {
		return p.isWorkerTopic(topic, clientID, wire.ChanUp) || p.isWorkerTopic(topic, clientID, wire.ChanStatus)
	}
	return p.isWorkerTopic(topic, clientID, wire.ChanDown) || p.isControl(topic)
}

// underPrefix: topic is <prefix>/... (no wildcard can widen that, since
// the first level is literal).
func (p *policy) underPrefix(topic string) bool {
	rest, ok := strings.CutPrefix(topic, p.prefix)
	return ok && len(rest) > 1 && rest[0] == '/'
}

// isWorkerTopic: topic is exactly <prefix>/<id>/<channel>.
func (p *policy) isWorkerTopic(topic, id, channel string) bool {
	rest, ok := strings.CutPrefix(topic, p.prefix)
	if !ok || len(rest) == 0 || rest[0] != '/' {
		return false
	}
	rest, ok = strings.CutPrefix(rest[1:], id)
	return ok && len(rest) == len(channel)+1 && rest[0] == '/' && rest[1:] == channel
}

// isControl: topic is <prefix>/_control or under it (a filter included:
// every topic such a filter matches is under it too).
func (p *policy) isControl(topic string) bool {
	return strings.HasPrefix(topic, p.control) || topic == p.control[:len(p.control)-1]
}
