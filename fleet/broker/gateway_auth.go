package broker

import (
	"fmt"
	"strings"

	"github.com/fleetsim/fleetsim/fleet/wire"
)

// checkGateway decides a gateway's login (see Auth); reason is empty when
// it is accepted.
func (p *policy) checkGateway(l loginReq) (reason string) {
	gw, _, err := wire.ParseGatewayUsername(l.username)
	if err != nil {
		return err.Error()
	}
	if l.clientID != l.username {
		// Its own namespace of client ids: no worker id has a "/", so a
		// gateway can never take a worker's session over, nor a worker a
		// gateway's.
		return fmt.Sprintf("client id %q differs from the username %q; a gateway uses its whole username as client id", l.clientID, l.username)
	}
	if reason := p.checkPassword(l.username, l.password, "gateway"); reason != "" {
		return reason
	}
	if l.willTopic != "" && l.willTopic != p.topics.GatewayStatus(gw) {
		return fmt.Sprintf("will topic %q: a gateway's will must be on its own status topic %q", l.willTopic, p.topics.GatewayStatus(gw))
	}
	return ""
}

// gatewayAllowed is allowed for a gateway's login. The username passed
// checkGateway at login, so it parses; it is parsed again on each check
// rather than kept per client, which costs no allocation.
func (p *policy) gatewayAllowed(username, clientID, topic string, write bool) bool {
	if clientID != username {
		return false
	}
	gw, devices, err := wire.ParseGatewayUsername(username)
	if err != nil {
		return false
	}
	device, channel, ok := p.deviceTopic(topic)
	inRange := ok && devices.Contains(device)
	if write {
		return inRange && (channel == wire.ChanUp || channel == wire.ChanStatus) || p.isGatewayStatus(topic, gw)
	}
	return inRange && channel == wire.ChanDown || p.isControl(topic)
}

// deviceTopic splits <prefix>/<device>/<channel> (exactly three levels,
// none empty). It does not check the device id: DeviceRange.Contains
// admits only a prefix and digits, so no wildcard.
func (p *policy) deviceTopic(topic string) (device, channel string, ok bool) {
	rest, ok := strings.CutPrefix(topic, p.prefix)
	if !ok || len(rest) == 0 || rest[0] != '/' {
		return "", "", false
	}
	device, channel, ok = strings.Cut(rest[1:], "/")
	if !ok || device == "" || channel == "" || strings.IndexByte(channel, '/') >= 0 {
		return "", "", false
	}
	return device, channel, true
}

// isGatewayStatus: topic is exactly <prefix>/_gateway/<gw>/status.
func (p *policy) isGatewayStatus(topic, gw string) bool {
	rest, ok := strings.CutPrefix(topic, p.gateways)
	if !ok {
		return false
	}
	rest, ok = strings.CutPrefix(rest, gw)
	return ok && len(rest) == len(wire.ChanStatus)+1 && rest[0] == '/' && rest[1:] == wire.ChanStatus
}
