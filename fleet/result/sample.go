package result

// Sample is the fleet at one moment of simulated time: the time series the
// HTML report charts and the dashboard draws. Counters are cumulative since
// the start of the run.
type Sample struct {
	T Seconds `json:"t"` // simulated seconds since the start

	LeaderDepth    int `json:"leader_depth"`
	LeaderCapacity int `json:"leader_capacity"`
	// LeaderMaxDepth is the most requests the leader's mailbox has held
	// at once since the run started (over its restarts): the high-water
	// mark a moment's depth misses when a burst fills and empties the box
	// between two samples.
	LeaderMaxDepth int     `json:"leader_max_depth"`
	LeaderWaitP99  Seconds `json:"leader_wait_p99"`
	// LeaderWaitP99Interval is the p99 of the waits that ended since the
	// sample before (0 when none did): what the mailbox is like now,
	// where LeaderWaitP99 covers the whole run so far.
	LeaderWaitP99Interval Seconds `json:"leader_wait_p99_interval"`
	LeaderAccepted        uint64  `json:"leader_accepted"`
	LeaderRejected        uint64  `json:"leader_rejected"`
	LeaderDropped         uint64  `json:"leader_dropped"`
	HeartbeatsQueued      int     `json:"heartbeats_queued"`
	// JobRequests counts the job requests the leader received so far
	// (over its restarts), whatever their answer, and JobsDrained those
	// answered "drained": the pulling workers' poll traffic. Both stay 0
	// in a run without pulling workers.
	JobRequests uint64 `json:"job_requests,omitempty"`
	JobsDrained uint64 `json:"jobs_drained,omitempty"`
	// JobsOldest is the age of the oldest job not done (queued or
	// leased) in the serving leader's job queue: jobs.oldest_age is the
	// most it reached.
	JobsOldest Seconds `json:"jobs_oldest,omitempty"`

	Limits       []int  `json:"limits"`    // AIMD limit per partition
	InFlight     int    `json:"in_flight"` // deliveries running
	Delivered    uint64 `json:"delivered"`
	Backpressure uint64 `json:"backpressure"`
	Retries      uint64 `json:"retries"`
	DeadLettered uint64 `json:"dead_lettered"`

	OutboxDepth  int     `json:"outbox_depth"`
	OutboxOldest Seconds `json:"outbox_oldest"`

	Online      int    `json:"online"`
	Busy        int    `json:"busy"`
	AtTarget    int    `json:"at_target"`    // workers at the latest deployed version
	WorkerDepth int    `json:"worker_depth"` // commands queued in all worker mailboxes
	WorkerFull  uint64 `json:"worker_full"`  // "full" answers so far

	LeaderUp bool `json:"leader_up"`
}
