package wire

import (
	"errors"
	"strings"
	"testing"
)

func TestStatusVia(t *testing.T) {
	for _, s := range []Status{
		{Online: true, Epoch: "e1", Via: "gw-1"},
		{Epoch: "e1", Via: "gw-1"},
	} {
		got, err := ParseStatus("fleet/w-1/status", s.Payload())
		if err != nil || got != s {
			t.Errorf("ParseStatus(%q) = %+v, %v; want %+v", s.Payload(), got, err, s)
		}
	}
	for _, bad := range []string{
		"online e1 via", "online e1 via ", "online e1 by gw-1", "online e1 via _gw",
		"online e1 via gw/1", "online e1  via gw-1", "online e1 via gw-1 ", "online e1 via gw-1 x",
	} {
		if _, err := ParseStatus("fleet/w-1/status", []byte(bad)); !errors.Is(err, ErrBadStatus) {
			t.Errorf("ParseStatus(%q) = %v, want ErrBadStatus", bad, err)
		}
	}
}

func TestGatewayTopics(t *testing.T) {
	tp := Topics{}
	if got := tp.GatewayStatus("gw-3"); got != "fleet/_gateway/gw-3/status" {
		t.Fatalf("GatewayStatus = %q", got)
	}
	gw, err := tp.ParseGatewayStatus("fleet/_gateway/gw-3/status")
	if err != nil || gw != "gw-3" {
		t.Fatalf("ParseGatewayStatus = %q, %v", gw, err)
	}
	for _, bad := range []string{"fleet/gw-3/status", "fleet/_gateway/gw-3/up", "fleet/_gateway/_x/status", "fleet/_gateway/a/b/status"} {
		if _, err := tp.ParseGatewayStatus(bad); err == nil {
			t.Errorf("ParseGatewayStatus(%q) accepted", bad)
		}
	}
	// A worker topic parser never takes a gateway's status for a worker's.
	if _, _, err := tp.Parse("fleet/_gateway/gw-3/status"); err == nil {
		t.Error("Parse accepted a gateway status topic as a worker topic")
	}
}

func TestDeviceRange(t *testing.T) {
	r, err := ParseDeviceRange("w-{10..999}")
	if err != nil {
		t.Fatal(err)
	}
	if r != (DeviceRange{Prefix: "w-", First: 10, Last: 999}) || r.String() != "w-{10..999}" {
		t.Fatalf("ParseDeviceRange = %+v (%s)", r, r)
	}
	for id, want := range map[string]bool{
		"w-10": true, "w-00010": true, "w-999": true, "w-9": false, "w-1000": false,
		"w-": false, "x-10": false, "w-1a": false, "w--10": false, "w-99999999999999999999": false,
	} {
		if got := r.Contains(id); got != want {
			t.Errorf("Contains(%q) = %v, want %v", id, got, want)
		}
	}
	for _, bad := range []string{"w-", "w-{1..}", "w-{..1}", "w-{2..1}", "w-{1-2}", "w/{1..2}", "_w{1..2}", "w-{1..2", "w-{a..2}", "w-{1..99999999999999999999}"} {
		if _, err := ParseDeviceRange(bad); err == nil {
			t.Errorf("ParseDeviceRange(%q) accepted", bad)
		}
	}
}

func TestGatewayUsername(t *testing.T) {
	r := DeviceRange{Prefix: "w-", First: 0, Last: 999}
	u := GatewayUsername("gw-00000", r)
	if u != "gateway/gw-00000/w-{0..999}" || !IsGatewayUsername(u) {
		t.Fatalf("GatewayUsername = %q", u)
	}
	gw, got, err := ParseGatewayUsername(u)
	if err != nil || gw != "gw-00000" || got != r {
		t.Fatalf("ParseGatewayUsername = %q, %+v, %v", gw, got, err)
	}
	for _, bad := range []string{"gw-1", "gateway/gw-1", "gateway/_gw/w-{0..1}", "gateway/gw-1/w-{1..0}"} {
		if _, _, err := ParseGatewayUsername(bad); err == nil || !strings.Contains(err.Error(), "username") {
			t.Errorf("ParseGatewayUsername(%q) = %v, want an error naming the username", bad, err)
		}
	}
}
