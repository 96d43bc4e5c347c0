package dash

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/charmbracelet/x/exp/golden"

	"github.com/fleetsim/fleetsim/fleet/clock"
)

// TestGoldenRemoteLeaderDown is 'sim dash' after the leader process
// (and the broker it embeds) was killed: the connection is lost, so the
// workers' statuses shown are the last ones known, dim, with the time
// they were, not a live "54 online"; the header names the leader once.
func TestGoldenRemoteLeaderDown(t *testing.T) {
	for _, sz := range [][2]int{{80, 24}, {140, 40}} {
		t.Run(fmt.Sprintf("%dx%d", sz[0], sz[1]), func(t *testing.T) {
			r := remoteFixture(t)
			clk := r.o.Clock.(*clock.Fake)
			close(r.sess.(fakeConn).lost) // killed at 1m00.5s
			r.Snapshot()                  // and noticed
			clk.Advance(12 * time.Second)
			m := screenOf(t, r, nil, Options{}, sz[0], sz[1])
			ls := lines(m)
			if head := ls[0]; strings.Count(head, "remote") != 1 || !strings.Contains(head, "attached 1m12s") {
				t.Errorf("header %q: want the leader named once, and how long attached", head)
			}
			if !strings.Contains(ls[1], "stats 12.5s old") {
				t.Errorf("header %q: want the age of the last report", ls[1])
			}
			fleet := strings.Join(paneLines(t, m, "Last known · Fleet"), "\n")
			for _, want := range []string{"last known at 1m00s:", "54 online", "no statuses while the broker is lost"} {
				if !strings.Contains(fleet, want) {
					t.Errorf("fleet pane lacks %q:\n%s", want, fleet)
				}
			}
			if all := strings.Join(ls, "\n"); !strings.Contains(all, "leader DOWN") {
				t.Errorf("screen:\n%s", all)
			}
			golden.RequireEqual(t, []byte(m.View()))
		})
	}
}

// A leader that said goodbye while the broker stays (an external
// broker): the workers' statuses still arrive, so their counts are live,
// and the pane says so next to the leader being down.
func TestRemoteLeaderOfflineFleetLive(t *testing.T) {
	r := remoteFixture(t)
	r.onLeaderStatus("fleet/_leader/status", []byte("offline"))
	r.onStatus("fleet/w-000/status", []byte("offline e1"))
	m := screenOf(t, r, nil, Options{}, 120, 36)
	fleet := strings.Join(paneLines(t, m, "Fleet"), "\n")
	if strings.Contains(fleet, "last known") || !strings.Contains(fleet, "53 online") || !strings.Contains(fleet, "from statuses (live)") {
		t.Errorf("fleet pane with the leader offline and the broker up:\n%s", fleet)
	}
}
