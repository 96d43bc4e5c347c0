package leader

import (
	"sort"
	"sync"
	"time"
)

// fleetView is what the leader knows of each worker, and of the gateways
// that announce some of them.
type fleetView struct {
	mu       sync.Mutex
	workers  map[string]*workerState
	gateways map[string]*gatewayState
	// gatewaysOnline counts the gateways whose last status applied is
	// online.
	gatewaysOnline int
}

type workerState struct {
	online        bool
	epoch         string    // of the last online applied; "" if it had none
	since         time.Time // of the last online/offline change
	version       string    // applied, as the last processed heartbeat said
	lastHeartbeat time.Time // when the leader processed it
	lastSeq       uint64
	seen          bool // any status or heartbeat at all
	// lastHeard is when the leader last had a message from it, or its
	// online status; suspect, that it has been silent for
	// Config.SuspectAfter since (the relay parks its commands).
	lastHeard time.Time
	suspect   bool
	// epochUnknown: brought online by its traffic, not by a status, so
	// no offline can be told stale.
	epochUnknown bool
	// via is the gateway its last online applied came through; "" for a
	// worker on its own session. It stays after an offline: the gateway
	// the device was last seen behind.
	via string
}

func (f *fleetView) init() {
	f.workers = make(map[string]*workerState)
	f.gateways = make(map[string]*gatewayState)
}

func (f *fleetView) get(id string) *workerState {
	w := f.workers[id]
	if w == nil {
		w = &workerState{}
		f.workers[id] = w
	}
	return w
}

// setOnline records an online status of the connection epoch, announced
// via gateway via ("" for the worker's own session). It reports
// whether the worker came back (reconnected): seen offline before, or
// online on another connection whose offline has not arrived (and, if it
// is a late will, never will count); and whether it was online already
// (wasOnline): false for a worker this leader has not yet seen online,
// true for a retained replay of the status it holds.
func (f *fleetView) setOnline(id, epoch, via string, now time.Time) (reconnected, wasOnline bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	w := f.get(id)
	// A suspect worker is online by its last status but not to the
	// relay (watchSilence parked it): its online brings it back.
	wasOnline = w.seen && w.online && !w.suspect
	// A worker brought online by its traffic had no known epoch: its
	// status, come late, is no new connection.
	reconnected = w.seen && (!w.online || epoch != "" && epoch != w.epoch && !w.epochUnknown)
	if !wasOnline {
		w.since = now
	}
	if wasOnline && w.via != via {
		f.leaveGateway(id, w.via)
	}
	if via != "" {
		f.gateway(via).devices[id] = struct{}{}
	}
	w.online, w.seen, w.epoch, w.via = true, true, epoch, via
	w.lastHeard, w.suspect, w.epochUnknown = now, false, false
	return reconnected, wasOnline
}

// staleOffline reports whether an offline status of the connection epoch
// speaks for a connection the worker has replaced: the worker is online on
// another epoch. One for a worker not seen online, or brought online by
// its traffic (no epoch known), is not stale.
func (f *fleetView) staleOffline(id, epoch string) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	w := f.workers[id]
	return epoch != "" && w != nil && w.online && !w.epochUnknown && w.epoch != epoch
}

// setOffline records an offline status.
func (f *fleetView) setOffline(id string, now time.Time) {
	f.mu.Lock()
	defer f.mu.Unlock()
	w := f.get(id)
	if w.online || !w.seen {
		w.since = now
	}
	if w.online {
		f.leaveGateway(id, w.via)
	}
	w.online, w.seen, w.suspect = false, true, false
}

// heartbeat applies a processed heartbeat; false if it is stale (not newer
// than one already processed).
func (f *fleetView) heartbeat(hb heartbeat, now time.Time) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	w := f.get(hb.worker)
	if w.seen && hb.seq != 0 && hb.seq <= w.lastSeq {
		return false
	}
	w.lastSeq, w.lastHeartbeat, w.seen = hb.seq, now, true
	if hb.body.Version != "" {
		w.version = hb.body.Version
	}
	return true
}

// WorkerView is one worker as the leader sees it.
type WorkerView struct {
	ID            string
	Online        bool
	Since         time.Time // last online/offline change
	Version       string    // from its last processed heartbeat
	LastHeartbeat time.Time // zero if none processed yet
	// Gateway is the gateway its last online came through ("online
	// <epoch> via <gateway>"), kept after it goes offline; "" for a
	// worker on its own session.
	Gateway string
	// Suspect: online by its last status, but silent for
	// Config.SuspectAfter; its commands wait until it is heard again.
	// Online is false meanwhile.
	Suspect bool
}

// FleetView is the leader's whole picture of the fleet.
type FleetView struct {
	Workers   []WorkerView   // sorted by id
	Online    int            // workers whose last status is online, or heard from since, and not suspect
	Suspect   int            // workers online by their status but silent for Config.SuspectAfter
	Offline   int            // workers whose last status is offline
	ByVersion map[string]int // workers per reported version
}

// Online returns how many workers' last status is online: Fleet().Online
// without copying the fleet, for a caller that polls it.
func (l *Leader) Online() int {
	f := &l.fleet
	f.mu.Lock()
	defer f.mu.Unlock()
	n := 0
	for _, w := range f.workers {
		if w.online && !w.suspect {
			n++
		}
	}
	return n
}

// Fleet returns the fleet view. It copies every worker: cheap for
// thousands, call it a few times a second at most for a million.
func (l *Leader) Fleet() FleetView {
	f := &l.fleet
	f.mu.Lock()
	defer f.mu.Unlock()
	v := FleetView{Workers: make([]WorkerView, 0, len(f.workers)), ByVersion: map[string]int{}}
	for id, w := range f.workers {
		v.Workers = append(v.Workers, WorkerView{ID: id, Online: w.online && !w.suspect, Suspect: w.suspect, Since: w.since, Version: w.version, LastHeartbeat: w.lastHeartbeat, Gateway: w.via})
		switch {
		case w.suspect:
			v.Suspect++
		case w.online:
			v.Online++
		default:
			v.Offline++
		}
		if w.version != "" {
			v.ByVersion[w.version]++
		}
	}
	sort.Slice(v.Workers, func(i, j int) bool { return v.Workers[i].ID < v.Workers[j].ID })
	return v
}
