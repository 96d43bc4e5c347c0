package scenario

// The checks of work pulling: a profile's poll mapping, and what the
// fleet's pulling workers need of the rest of the scenario.

// Pullers returns how many of the fleet's workers pull their jobs
// (delivery: pull), and the key that makes the first of them pull.
func (s *Scenario) Pullers() (n int, key string) {
	sizes, rest, err := s.Fleet.groupSizes()
	if err != nil {
		return 0, ""
	}
	pulls := func(p *WorkerProfile) bool { return p.Delivery != nil && *p.Delivery == DeliveryPull }
	fleetPulls := pulls(&s.Fleet.Worker)
	for i := range s.Fleet.Groups {
		g := &s.Fleet.Groups[i]
		if g.Delivery == nil && fleetPulls || pulls(&g.WorkerProfile) {
			n += sizes[i]
			if key == "" && g.Delivery != nil {
				key = join(index("fleet.groups", i), "delivery")
			} else if key == "" {
				key = "fleet.worker.delivery"
			}
		}
	}
	if fleetPulls && rest > 0 {
		n += rest
		if key == "" {
			key = "fleet.worker.delivery"
		}
	}
	return n, key
}

// pull checks what pulling workers need: something to pull, and a leader
// mailbox with room for one job request of each at once (each has at most
// one in flight; a smaller mailbox answers some "full" however the
// leader keeps up).
func (v *validator) pull(s *Scenario, _ fleetShape, shapeOK bool) {
	// leader.jobs' own bounds, and poll's and delivery's, are the key
	// table's, checked by the bounds walk.
	if !shapeOK {
		return
	}
	n, key := s.Pullers()
	if n == 0 {
		return
	}
	hasJobs := false
	for i := range s.Timeline {
		hasJobs = hasJobs || s.Timeline[i].Jobs != nil
	}
	if !hasJobs {
		// Placed at the timeline, where the event is missing; named by
		// the key that makes the workers pull.
		v.errorf("timeline", "%s: pull makes %d workers pull their jobs and no timeline event adds any: they would have nothing to pull; add one, as in - at: 10s then jobs: {count: 100}, or make them push", key, n)
	}
	room := func(path string, c int) {
		if c < n {
			v.errorf(path, "%d is too small for %d pulling workers: each has one job request in flight, and the leader's mailbox must hold them all at once: want at least %d", c, n, n)
		}
	}
	room("leader.mailbox.capacity", s.Leader.Mailbox.Capacity)
	for i := range s.Timeline {
		if sl := s.Timeline[i].SetLeader; sl != nil && sl.Capacity != nil {
			room(join(s.Timeline[i].path, "set_leader.capacity"), *sl.Capacity)
		}
	}
}

// jobsEvent checks a jobs event: exactly one of count and per_worker.
func (v *validator) jobsEvent(s *Scenario, j *JobsEvent, path string) {
	switch {
	case (j.Count == nil) == (j.PerWorker == nil):
		v.errorf(join(path, "jobs"), "a jobs event needs exactly one of count (jobs) or per_worker (jobs for each worker), as in jobs: {count: 100}")
	case j.PerWorker != nil: // count's and per_worker's own bounds are the key table's
		per := *j.PerWorker
		if per > 0 && s.Fleet.Count > 0 && per*s.Fleet.Count > maxJobs {
			v.errorf(join(path, "jobs"), "per_worker: %d jobs for each of %d workers is %d jobs: want at most %d in all", per, s.Fleet.Count, per*s.Fleet.Count, maxJobs)
		}
	}
}

// Jobs is how many jobs the event adds to a fleet of n workers.
func (j *JobsEvent) Jobs(n int) int {
	switch {
	case j.PerWorker != nil:
		return *j.PerWorker * n
	case j.Count != nil:
		return *j.Count
	}
	return 0
}
