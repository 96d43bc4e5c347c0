package main

import (
	"strings"
	"testing"
)

// TestDashFlags: bad flags are usage errors (exit 2) naming the flag, a
// non-terminal is refused as one, and an unreachable broker is a runtime
// failure (exit 1) naming it.
func TestDashFlags(t *testing.T) {
	for _, tc := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"dash"}, 2, "--broker is required"},
		{[]string{"dash", "--broker", "mem://"}, 2, `mem:// is the embedded broker`},
		{[]string{"dash", "--broker", "tcp://nohost"}, 2, "want tcp://host:port"},
		{[]string{"dash", "--broker", "tcp://127.0.0.1:1", "--refresh", "-1s"}, 2, "--refresh"},
		{[]string{"dash", "--broker", "tcp://127.0.0.1:1", "--topic-prefix", ""}, 2, "--topic-prefix"},
		{[]string{"dash", "--broker", "tcp://127.0.0.1:1", "--password-file", "testdata/missing.pw"}, 2, "--password-file"},
		{[]string{"dash", "--broker", "tcp://127.0.0.1:1", "extra"}, 2, "takes no arguments"},
		{[]string{"dash", "--broker", "tcp://127.0.0.1:1"}, 2, "needs a terminal"},
	} {
		code, _, stderr := sim(t, tc.args...)
		if code != tc.code || !strings.Contains(stderr, tc.want) {
			t.Errorf("sim %q: exit %d, stderr %q; want exit %d and %q", tc.args, code, stderr, tc.code, tc.want)
		}
	}
}

func TestDashUnreachable(t *testing.T) {
	old := onTerminal
	onTerminal = func() bool { return true }
	defer func() { onTerminal = old }()
	code, _, stderr := sim(t, "dash", "--broker", "tcp://127.0.0.1:1")
	if code != 1 || !strings.Contains(stderr, "tcp://127.0.0.1:1") || !strings.Contains(stderr, "is the leader running") {
		t.Errorf("exit %d, stderr %q; want 1 and the broker named", code, stderr)
	}
}
