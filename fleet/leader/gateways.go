package leader

import (
	"github.com/fleetsim/fleetsim/fleet/wire"
)

// onGatewayStatus follows a gateway's own retained status (and its last
// will) on <prefix>/_gateway/<gateway>/status. The gateway's devices keep
// their own status topics; what the gateway's status adds is its death:
//
//   - "offline <epoch>" whose epoch is that of the gateway's last online
//     applied, or for a gateway not seen online:
//     every device whose last online came via the gateway goes offline,
//     as if its own offline had come (the relay parks its commands);
//   - an offline of another epoch is the late will of a session the
//     gateway has replaced: counted as stale, ignored;
//   - "online <epoch>": the gateway is online; it announces its devices
//     after it. If it was online on another epoch, that session is gone
//     and so are the devices it carried: they go offline until the new
//     session announces them again;
//   - a status without an epoch is refused (as a worker's is, see
//     onStatus) and changes nothing.
//
// It runs on the delivery goroutine, with onStatus, in the broker's order.
func (l *Leader) onGatewayStatus(topic string, payload []byte) {
	gw, err := l.cfg.Topics.ParseGatewayStatus(topic)
	if err != nil {
		l.refuse(topic, len(payload), err)
		return
	}
	if len(payload) == 0 {
		return // a cleared retained message
	}
	st, err := wire.ParseEpochStatus(topic, payload)
	if err == nil && st.Via != "" {
		err = &wire.DecodeError{Topic: topic, Kind: wire.ErrBadStatus, Detail: `a gateway's own status has no "via"`}
	}
	if err != nil {
		l.refuse(gw, len(payload), err)
		return
	}
	now := l.clk.Now()
	if st.Online {
		replaced := l.fleet.gatewayOnline(gw, st.Epoch)
		for _, d := range replaced {
			l.takeOffline(d, now)
		}
		l.c.gatewayDevicesOffline.Add(uint64(len(replaced)))
		return
	}
	devices, stale := l.fleet.gatewayOffline(gw, st.Epoch)
	if stale {
		l.c.statusStale.Add(1)
		l.cfg.Logger.Debug("stale gateway offline ignored", "gateway", gw, "epoch", st.Epoch)
		return
	}
	l.c.gatewayOfflines.Add(1)
	for _, d := range devices {
		l.takeOffline(d, now)
	}
	l.c.gatewayDevicesOffline.Add(uint64(len(devices)))
}
