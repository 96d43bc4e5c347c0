package result

import "testing"

// TestCommandLedgerLost: each of the four balances alone makes commands
// lost, a negative outbox ledger is reported as is, and a ledger that
// closes loses nothing.
func TestCommandLedgerLost(t *testing.T) {
	// 10 sent: 6 acked, 1 expired, 3 still queued (of which 1 was there
	// at the start); the workers took the 6 they acked ok.
	closed := CommandLedger{
		Outbox:       OutboxResult{Enqueued: 10, Acked: 6, Expired: 1, Depth: 4},
		DepthAtStart: 1, AckedOK: 6, Taken: 6,
	}
	for _, tc := range []struct {
		name string
		edit func(*CommandLedger)
		want int64
	}{
		{"closed", func(*CommandLedger) {}, 0},
		{"outbox ledger short", func(l *CommandLedger) { l.Outbox.Enqueued = 12 }, 2},
		{"outbox ledger negative", func(l *CommandLedger) { l.Outbox.Enqueued = 7 }, -3},
		{"acked that no worker took", func(l *CommandLedger) { l.AckedOK, l.Taken = 4, 4 }, 2},
		{"workers' ledger short", func(l *CommandLedger) { l.Taken = 3 }, 3},
		{"workers' ledger closed by drops and queue", func(l *CommandLedger) { l.Taken, l.DroppedAfterAck, l.Held = 3, 2, 1 }, 0},
		{"missing targets past what explains them", func(l *CommandLedger) { l.Missing = 9 }, 4}, // expired 1 + depth 4
		{"missing targets explained", func(l *CommandLedger) { l.Missing = 5 }, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			l := closed
			tc.edit(&l)
			if got := l.Lost(); got != tc.want {
				t.Errorf("Lost() = %d, want %d (%+v)", got, tc.want, l)
			}
		})
	}
}

// TestTelemetryBalance: the remainder of what was generated is lost, and
// so is what the workers were told was accepted beyond what the leader
// received.
func TestTelemetryBalance(t *testing.T) {
	closed := TelemetryResult{Generated: 20, Direct: 10, Forwarded: 4, Rejected: 2, Dropped: 1, LostInReboot: 1, Pending: 2}
	for _, tc := range []struct {
		name     string
		edit     func(*TelemetryResult)
		received uint64
		want     int64
	}{
		{"closed", func(*TelemetryResult) {}, 14, 0},
		{"remainder", func(t *TelemetryResult) { t.Generated = 23 }, 14, 3},
		{"negative", func(t *TelemetryResult) { t.Generated = 18 }, 14, -2},
		{"accepted but not received", func(*TelemetryResult) {}, 11, 3},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tr := closed
			tc.edit(&tr)
			if got := tr.Balance(tc.received); got != tc.want {
				t.Errorf("Balance(%d) = %d, want %d", tc.received, got, tc.want)
			}
		})
	}
}
