package scenario

import (
	"os"
	"strings"
	"testing"
	"time"

	"github.com/fleetsim/fleetsim/fleet/leader"
	"github.com/fleetsim/fleetsim/fleet/mailbox"
	"github.com/fleetsim/fleetsim/fleet/worker"
)

const scenariosDoc = "../../docs/SCENARIOS.md"

// keyBlock is the reference's text for the key table named name, between
// its markers.
func keyBlock(t keyTable) string {
	if t.Name != "actions" {
		return keyRows(t.Keys, "timeline[].")
	}
	var parts []string
	for i := 0; i < len(t.Keys); {
		a := t.Keys[i]
		name := strings.TrimPrefix(a.Path, "timeline[].")
		j := i + 1
		for j < len(t.Keys) && strings.HasPrefix(t.Keys[j].Path, a.Path+".") {
			j++
		}
		rows := t.Keys[i+1 : j]
		if a.Type != "" { // an action that is its own value: speed
			own := a
			own.Doc, own.Example = "", ""
			rows = append([]Key{own}, rows...)
		}
		parts = append(parts, wrap("**`"+name+"`** — "+a.Doc, 79),
			"```yaml\n"+a.Example+"```", keyRows(rows, "timeline[]."))
		i = j
	}
	return strings.Join(parts, "\n\n")
}

// keyRows renders keys as a table with the columns some key fills.
func keyRows(keys []Key, trim string) string {
	heads := []string{"Type", "Default", "Valid", "Meaning"}
	cells := make([][]string, len(keys))
	used := make([]bool, len(heads))
	for i, k := range keys {
		cells[i] = []string{k.Type, k.defaultText(), k.validText(), k.Doc}
		for c, v := range cells[i] {
			used[c] = used[c] || v != ""
		}
	}
	head, line := "| Key |", "|---|"
	for c, h := range heads {
		if used[c] {
			head, line = head+" "+h+" |", line+"---|"
		}
	}
	var b strings.Builder
	b.WriteString(head + "\n" + line + "\n")
	for i, k := range keys {
		b.WriteString("| `" + strings.TrimPrefix(k.Path, trim) + "` |")
		for c, v := range cells[i] {
			switch {
			case used[c] && v == "":
				b.WriteString(" |")
			case used[c]:
				b.WriteString(" " + v + " |")
			}
		}
		b.WriteString("\n")
	}
	return strings.TrimSuffix(b.String(), "\n")
}

// wrap breaks text into lines of at most width characters, at spaces.
func wrap(text string, width int) string {
	var lines []string
	line := ""
	for _, w := range strings.Fields(text) {
		if line != "" && len(line)+1+len(w) > width {
			lines, line = append(lines, line), w
			continue
		}
		line = strings.TrimPrefix(line+" "+w, " ")
	}
	return strings.Join(append(lines, line), "\n")
}

// keyReference rewrites doc's generated key tables from keyTables.
func keyReference(t *testing.T, doc string) string {
	for _, kt := range keyTables {
		begin := "<!-- keys " + kt.Name + ": generated from fleet/scenario/keys.go by go test ./fleet/scenario -run TestKeyReference -update -->\n"
		end := "\n<!-- end keys " + kt.Name + " -->"
		before, rest, ok := strings.Cut(doc, begin)
		_, after, ok2 := strings.Cut(rest, end)
		if !ok || !ok2 {
			t.Fatalf("docs/SCENARIOS.md has no markers for the key table %q:\n%s...%s", kt.Name, begin, end)
		}
		doc = before + begin + keyBlock(kt) + end + after
	}
	return doc
}

// TestKeyReference keeps the key reference of docs/SCENARIOS.md what the
// key table says: -update rewrites it.
func TestKeyReference(t *testing.T) {
	data, err := os.ReadFile(scenariosDoc)
	if err != nil {
		t.Fatal(err)
	}
	want := keyReference(t, string(data))
	if *update {
		if err := os.WriteFile(scenariosDoc, []byte(want), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	if want != string(data) {
		t.Error("docs/SCENARIOS.md's key reference is not what fleet/scenario/keys.go says: run go test ./fleet/scenario -run TestKeyReference -update")
	}
}

// The actions' examples are timeline entries the loader takes.
func TestKeyExamplesLoad(t *testing.T) {
	for _, k := range actionKeys() {
		if k.Example == "" {
			continue
		}
		file := "name: x\nduration: 10m\nfleet:\n  count: 1000\n  gateway_size: 100\n  groups: [{name: flaky, count: 10}, {name: config-servers, count: 3}, {name: satellite, count: 5}]\ntimeline:\n" + k.Example
		if _, err := Parse("example.yaml", []byte(file)); err != nil {
			t.Errorf("%s: the example does not load: %v", k.Path, err)
		}
	}
}

// The defaults the key table gives the worker's and the leader's settings
// are the packages' own: the packages are the source, the table's values
// must equal them (the scenario package does not link the runtime).
func TestKeyDefaultsAreTheMechanisms(t *testing.T) {
	for _, c := range []struct {
		path string
		want any
	}{
		{"fleet.worker.mailbox.capacity", worker.DefaultMailboxCapacity},
		{"fleet.worker.reconnect.base", Duration(worker.DefaultReconnectBackoff.Base)},
		{"fleet.worker.reconnect.cap", Duration(worker.DefaultReconnectBackoff.Cap)},
		{"fleet.worker.keepalive", Duration(worker.DefaultKeepAlive)},
		{"fleet.worker.ask_timeout", Duration(worker.DefaultAskTimeout)},
		{"fleet.worker.version", worker.DefaultVersion},
		{"fleet.worker.local_outbox", worker.DefaultLocalOutbox},
		{"leader.mailbox.capacity", leader.DefaultMailboxCapacity},
		{"leader.heartbeat_interval", Duration(leader.DefaultHeartbeatInterval)},
		{"leader.ask_timeout", Duration(leader.DefaultAskTimeout)},
		{"leader.mailbox.block_timeout", Duration(mailbox.DefaultBlockTimeout)},
	} {
		if got := mustKey(c.path).Default; got != c.want {
			t.Errorf("%s: the key table's default is %v, the mechanism's %v", c.path, got, c.want)
		}
	}
	if d := mustKey("fleet.worker.service").Default; d != defaultService || defaultService.Mean != time.Millisecond {
		t.Errorf("fleet.worker.service: %v", d)
	}
}

func actionKeys() []Key {
	for _, t := range keyTables {
		if t.Name == "actions" {
			return t.Keys
		}
	}
	return nil
}
