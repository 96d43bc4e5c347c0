package mailbox_test

import (
	"testing"

	"go.uber.org/goleak"
)

// Block offers and Take start no goroutines of their own, but the tests do;
// every one of them must be gone at the end.
func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }
