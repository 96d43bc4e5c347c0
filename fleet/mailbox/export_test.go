package mailbox

// SetInitialRing makes new bounded mailboxes start with a ring of n slots,
// so that tests with small capacities exercise the ring's growth; the
// returned func restores the default. Not for parallel tests.
func SetInitialRing(n int) (restore func()) {
	old := initialRing
	initialRing = n
	return func() { initialRing = old }
}
