package wire_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/fleetsim/fleetsim/fleet/wire"
)

const statusTopic = "fleet/w-1/status"

func TestParseStatusAccepts(t *testing.T) {
	tests := []struct {
		payload string
		want    wire.Status
	}{
		{"online", wire.Status{Online: true}},
		{"offline", wire.Status{}},
		{"online 9f2c4e1a7b3d5e60-1", wire.Status{Online: true, Epoch: "9f2c4e1a7b3d5e60-1"}},
		{"offline 9f2c4e1a7b3d5e60-1", wire.Status{Epoch: "9f2c4e1a7b3d5e60-1"}},
		{"online 7", wire.Status{Online: true, Epoch: "7"}},
		{"offline " + strings.Repeat("e", wire.MaxEpochLen), wire.Status{Epoch: strings.Repeat("e", wire.MaxEpochLen)}},
		{"online A.b_C-0", wire.Status{Online: true, Epoch: "A.b_C-0"}},
	}
	for _, tc := range tests {
		t.Run(tc.payload, func(t *testing.T) {
			got, err := wire.ParseStatus(statusTopic, []byte(tc.payload))
			if err != nil {
				t.Fatalf("ParseStatus: %v", err)
			}
			if got != tc.want {
				t.Fatalf("parsed %+v, want %+v", got, tc.want)
			}
			if s := got.String(); s != tc.payload {
				t.Fatalf("String() = %q, want the payload %q back", s, tc.payload)
			}
		})
	}
}

func TestParseStatusRefuses(t *testing.T) {
	for _, payload := range []string{
		"", "Online", "ONLINE", "on", "onlinex", " online", "online ", "online\n", "offline\r\n",
		"online  e1", "online\te1", "online e1 e2", "online e/1", "online e+1", "online é",
		"offline " + strings.Repeat("e", wire.MaxEpochLen+1), "up e1", "online\x00", `{"status":"online"}`,
	} {
		t.Run(payload, func(t *testing.T) {
			s, err := wire.ParseStatus(statusTopic, []byte(payload))
			if err == nil {
				t.Fatalf("accepted %q as %+v", payload, s)
			}
			var de *wire.DecodeError
			if !errors.As(err, &de) || !errors.Is(err, wire.ErrBadStatus) || de.Topic != statusTopic {
				t.Fatalf("error %v: want a *DecodeError for %s with kind ErrBadStatus", err, statusTopic)
			}
			if !strings.Contains(err.Error(), `want "online" or "offline"`) {
				t.Fatalf("error %q does not say what would be valid", err)
			}
		})
	}
}

func TestValidEpoch(t *testing.T) {
	for _, e := range []string{"1", "9f2c4e1a7b3d5e60-12", strings.Repeat("z", wire.MaxEpochLen)} {
		if err := wire.ValidEpoch(e); err != nil {
			t.Errorf("ValidEpoch(%q): %v", e, err)
		}
	}
	for _, e := range []string{"", " ", "a b", "a/b", "#", strings.Repeat("z", wire.MaxEpochLen+1)} {
		if err := wire.ValidEpoch(e); err == nil {
			t.Errorf("ValidEpoch(%q) accepted", e)
		}
	}
}

// TestParseEpochStatus: the statuses the leader acts on carry an epoch; a
// plain one is well formed but refused as naming no connection.
func TestParseEpochStatus(t *testing.T) {
	for _, payload := range []string{"online e1", "offline e1", "online d1 via gw-w-0"} {
		if _, err := wire.ParseEpochStatus(statusTopic, []byte(payload)); err != nil {
			t.Errorf("ParseEpochStatus(%q): %v", payload, err)
		}
	}
	for _, payload := range []string{"online", "offline"} {
		_, err := wire.ParseEpochStatus(statusTopic, []byte(payload))
		var de *wire.DecodeError
		if !errors.As(err, &de) || !errors.Is(err, wire.ErrNoEpoch) || !strings.Contains(err.Error(), "names no connection") {
			t.Errorf("ParseEpochStatus(%q) = %v; want a *DecodeError of kind ErrNoEpoch", payload, err)
		}
	}
	if _, err := wire.ParseEpochStatus(statusTopic, []byte("online\n")); !errors.Is(err, wire.ErrBadStatus) {
		t.Errorf("a malformed status: %v, want ErrBadStatus", err)
	}
}
