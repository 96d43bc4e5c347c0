package leader

import "slices"

// gatewayState is what the leader knows of one gateway: its own status,
// and the devices it carries now.
type gatewayState struct {
	seen   bool // its own status applied at least once
	online bool
	epoch  string // of its last online applied; "" if it had none
	// devices are the online devices whose last online came via this
	// gateway: those its offline takes offline.
	devices map[string]struct{}
}

// gateway returns gw's state, creating it unseen. Called with f.mu held.
func (f *fleetView) gateway(gw string) *gatewayState {
	g := f.gateways[gw]
	if g == nil {
		g = &gatewayState{devices: make(map[string]struct{})}
		f.gateways[gw] = g
	}
	return g
}

// leaveGateway forgets that device is carried by gw ("" for none). A
// gateway known only from its devices' statuses is forgotten with its
// last device: a status payload may name any gateway, and the map must
// not grow with names that never come back. Called with f.mu held.
func (f *fleetView) leaveGateway(device, gw string) {
	if g := f.gateways[gw]; g != nil {
		delete(g.devices, device)
		if !g.seen && len(g.devices) == 0 {
			delete(f.gateways, gw)
		}
	}
}

// gatewayDown reports whether the last status applied for gw says offline:
// a device online via it is then a leftover of its dead session.
func (f *fleetView) gatewayDown(gw string) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	g := f.gateways[gw]
	return g != nil && g.seen && !g.online
}

// gatewayOnline records gw's online of the connection epoch. If gw was
// online on another epoch, that session is gone and its devices' virtual
// sessions with it (whether or not its will has arrived): it returns them,
// sorted, for the caller to take offline; the new session announces the
// devices it carries again, after its own online.
func (f *fleetView) gatewayOnline(gw, epoch string) (replaced []string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	g := f.gateway(gw)
	if g.seen && g.online && epoch != "" && epoch != g.epoch {
		replaced = sortedKeys(g.devices)
	}
	if !g.seen || !g.online {
		f.gatewaysOnline++
	}
	g.seen, g.online, g.epoch = true, true, epoch
	return replaced
}

// gatewayOffline records gw's offline of the connection epoch and returns
// the devices online via gw, sorted, for the caller to take offline. An
// offline whose epoch is not that of the online last applied for gw is
// stale (the late will of a replaced session): it changes nothing. One
// for a gateway not seen online applies. (onGatewayStatus refuses an
// offline without an epoch before it gets here.)
func (f *fleetView) gatewayOffline(gw, epoch string) (devices []string, stale bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	g := f.gateway(gw)
	if epoch != "" && g.online && g.epoch != epoch {
		return nil, true
	}
	if g.online {
		f.gatewaysOnline--
	}
	g.seen, g.online = true, false
	return sortedKeys(g.devices), false
}

// gatewayCount returns how many gateways are online now.
func (f *fleetView) gatewayCount() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.gatewaysOnline
}

func sortedKeys(m map[string]struct{}) []string {
	if len(m) == 0 {
		return nil
	}
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}
