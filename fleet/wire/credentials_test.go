package wire_test

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"strings"
	"testing"

	"github.com/fleetsim/fleetsim/fleet/wire"
)

var credSecret = []byte("0123456789abcdef-test-secret")

func issue(t testing.TB, r string) wire.Credentials {
	t.Helper()
	rng, err := wire.ParseIDRange(r)
	if err != nil {
		t.Fatal(err)
	}
	c, err := wire.IssueCredentials(credSecret, rng)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// TestCredentialsDerivation pins the derivation docs/PROTOCOL.md gives a
// worker in another language: the range key is HMAC-SHA256(secret,
// "fleetsim-range:" + range), the password "<range>:" + hex(HMAC-SHA256(
// range key, username)).
func TestCredentialsDerivation(t *testing.T) {
	c := issue(t, "w-0000..w-0999")
	if c.Range.String() != "w-{0..999}" {
		t.Fatalf("range %s", c.Range)
	}
	m := hmac.New(sha256.New, credSecret)
	m.Write([]byte("fleetsim-range:w-{0..999}"))
	if !hmac.Equal(c.Key[:], m.Sum(nil)) {
		t.Fatalf("key %x is not HMAC(secret, fleetsim-range:w-{0..999})", c.Key)
	}
	m = hmac.New(sha256.New, c.Key[:])
	m.Write([]byte("w-0042"))
	if want := "w-{0..999}:" + hex.EncodeToString(m.Sum(nil)); c.Password("w-0042") != want {
		t.Fatalf("password %s, want %s", c.Password("w-0042"), want)
	}
	if c.Password("w-0042") == issue(t, "w-0000..w-1999").Password("w-0042") {
		t.Fatal("two ranges give one id the same password")
	}
	if c.Password("w-0042") == c.Password("w-0043") {
		t.Fatal("two ids share a password")
	}
}

// TestCredentialsDocumentedExample: the key and the password that
// docs/PROTOCOL.md shows for w-{0..999} under the fleet secret
// "0123456789abcdef-secret".
func TestCredentialsDocumentedExample(t *testing.T) {
	c, err := wire.IssueCredentials([]byte("0123456789abcdef-secret"), wire.DeviceRange{Prefix: "w-", First: 0, Last: 999})
	if err != nil {
		t.Fatal(err)
	}
	if got := hex.EncodeToString(c.Key[:]); got != "6322e0e09bb328b4850813a06190b48183ed328e947cdf99d9cc9feb2dc66bba" {
		t.Errorf("key %s", got)
	}
	if got := c.Password("w-0042"); got != "w-{0..999}:f8de753342cff8294c8ae74a41a0decfaf772ac4789b95895236b8e7ee2e4d22" {
		t.Errorf("password %s", got)
	}
}

// TestCredentialsFileRoundTrip: File writes what ParseCredentials reads.
func TestCredentialsFileRoundTrip(t *testing.T) {
	c := issue(t, "w-{0..999}")
	got, err := wire.ParseCredentials(c.File())
	if err != nil || got != c {
		t.Fatalf("ParseCredentials(File()) = %+v, %v; want %+v", got, err, c)
	}
	crlf := strings.ReplaceAll(string(c.File()), "\n", "\r\n")
	if got, err := wire.ParseCredentials([]byte(crlf)); err != nil || got != c {
		t.Fatalf("with CRLF line ends: %+v, %v", got, err)
	}
}

func TestParseCredentialsRefuses(t *testing.T) {
	key := "key " + strings.Repeat("ab", 32)
	for _, tc := range []struct {
		name, file, mention string
	}{
		{"empty", "", "empty"},
		{"no header", "range w-{0..9}\n" + key, `line 1: "range w-{0..9}": want "fleetsim-credentials 1" first`},
		{"other version", "fleetsim-credentials 2\n", `want "fleetsim-credentials 1"`},
		{"no range", "fleetsim-credentials 1\n" + key, "no range line"},
		{"no key", "fleetsim-credentials 1\nrange w-{0..9}\n", "no key line"},
		{"two ranges", "fleetsim-credentials 1\nrange w-{0..9}\nrange w-{0..99}\n" + key, "line 3: a second range"},
		{"two keys", "fleetsim-credentials 1\nrange w-{0..9}\n" + key + "\n" + key, "line 4: a second key"},
		{"bad range", "fleetsim-credentials 1\nrange w-{9..0}\n" + key, "line 2: device range \"w-{9..0}\": first 9 is after last 0"},
		{"range not canonical", "fleetsim-credentials 1\nrange w-{00..9}\n" + key, `want it written as "w-{0..9}"`},
		{"range too long for an id", "fleetsim-credentials 1\nrange " + strings.Repeat("w", 60) + "{0..99999}\n" + key, "a worker id has at most 64"},
		{"short key", "fleetsim-credentials 1\nrange w-{0..9}\nkey abcd", "line 3: key: want 64 hex digits, got 4 characters"},
		{"key not hex", "fleetsim-credentials 1\nrange w-{0..9}\nkey " + strings.Repeat("zz", 32), "want 64 hex digits"},
		{"unknown word", "fleetsim-credentials 1\nsecret x\n", `line 2: "secret": want "range`},
		{"too large", strings.Repeat("#", wire.MaxCredentialsSize+1), "at most 4096"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := wire.ParseCredentials([]byte(tc.file))
			if err == nil || !strings.Contains(err.Error(), tc.mention) {
				t.Fatalf("err = %v; want one saying %q", err, tc.mention)
			}
		})
	}
}

// TestAdmits: what a credential for w-{0..9} may log in as. A gateway
// carrying w-{0..9999} (the measured attack) is not among it.
func TestAdmits(t *testing.T) {
	r := wire.DeviceRange{Prefix: "w-", First: 0, Last: 9}
	for _, tc := range []struct {
		username string
		ok       bool
	}{
		{"w-0", true},
		{"w-0009", true},
		{"w-10", false},
		{"w-0010", false},
		{"v-1", false},
		{"w-", false},
		{"leader", false},
		{"_w-1", false},
		{wire.GatewayUsername("gw-w-0", r), true},
		{wire.GatewayUsername("gw-w-0005", wire.DeviceRange{Prefix: "w-", First: 5, Last: 9}), true},
		{wire.GatewayUsername("gw-w-0", wire.DeviceRange{Prefix: "w-", First: 0, Last: 10}), false},    // one device too many
		{wire.GatewayUsername("gw-evil", wire.DeviceRange{Prefix: "w-", First: 0, Last: 9999}), false}, // the attack
		{wire.GatewayUsername("gw-evil", r), false},                                                    // not named after a device
		{wire.GatewayUsername("w-3", r), false},                                                        // a device's own id
		{wire.GatewayUsername("gw-w-20", wire.DeviceRange{Prefix: "w-", First: 0, Last: 9}), false},    // named after another host's device
		{wire.GatewayUsername("gw-w-5", wire.DeviceRange{Prefix: "w-", First: 0, Last: 4}), false},     // after a device it does not carry
		{wire.GatewayUsername("gw-w-00", wire.DeviceRange{Prefix: "w-0", First: 0, Last: 9}), false},   // another prefix
		{"gateway/gw-w-0/w-{0..9", false},
	} {
		err := r.Admits(tc.username)
		if (err == nil) != tc.ok {
			t.Errorf("Admits(%q) = %v, want ok %v", tc.username, err, tc.ok)
		}
	}
}

func TestParseRangePassword(t *testing.T) {
	c := issue(t, "w-{0..9}")
	r, isRange, err := wire.ParseRangePassword(c.Password("w-1"))
	if err != nil || !isRange || r != c.Range {
		t.Fatalf("ParseRangePassword(Password) = %v, %v, %v", r, isRange, err)
	}
	if _, isRange, err := wire.ParseRangePassword(wire.WorkerPassword(credSecret, "w-1")); isRange || err != nil {
		t.Fatalf("a fleet-secret password: isRange %v, err %v", isRange, err)
	}
	mac := strings.Repeat("0f", 32)
	for _, tc := range []struct{ pw, mention string }{
		{"w-{0..9}:" + strings.ToUpper(mac), "lower-case hex"},
		{"w-{0..9}:" + mac[:10], "want 64 lower-case hex digits after the colon, got 10"},
		{"w-{00..9}:" + mac, `not written as "w-{0..9}"`},
		{"w-{9..0}:" + mac, "first 9 is after last 0"},
		{"w-0..w-9:" + mac, "want <prefix>{<first>..<last>}"},
		{":" + mac, "want <prefix>{<first>..<last>}"},
	} {
		if _, isRange, err := wire.ParseRangePassword(tc.pw); !isRange || err == nil || !strings.Contains(err.Error(), tc.mention) {
			t.Errorf("ParseRangePassword(%q) = %v, %v; want an error saying %q", tc.pw, isRange, err, tc.mention)
		}
	}
}

func TestParseIDRange(t *testing.T) {
	for _, tc := range []struct{ in, want, mention string }{
		{"w-0000..w-0999", "w-{0..999}", ""},
		{"w-{0..999}", "w-{0..999}", ""},
		{"w-0042", "w-{42..42}", ""},
		{"site-3-w-10..site-3-w-19", "site-3-w-{10..19}", ""},
		{"w-0999..w-0000", "", "first 999 is after last 0"},
		{"w-0..v-9", "", `prefixes "w-" and "v-" differ`},
		{"w-a..w-b", "", "no number at its end"},
		{"w-..w-9", "", "no number at its end"},
		{"_w-0..w-9", "", "reserved"},
		{"w-0..", "", "must be 1 to 64"},
		{"", "", "must be 1 to 64"},
	} {
		r, err := wire.ParseIDRange(tc.in)
		if tc.mention == "" {
			if err != nil || r.String() != tc.want {
				t.Errorf("ParseIDRange(%q) = %s, %v; want %s", tc.in, r, err, tc.want)
			}
			continue
		}
		if err == nil || !strings.Contains(err.Error(), tc.mention) {
			t.Errorf("ParseIDRange(%q) = %s, %v; want an error saying %q", tc.in, r, err, tc.mention)
		}
	}
}

// FuzzParseCredentials: no file crashes the parser, and what it accepts is
// a credential File writes back and reads again to the same value.
func FuzzParseCredentials(f *testing.F) {
	f.Add(issue(f, "w-{0..999}").File())
	f.Add([]byte("fleetsim-credentials 1\nrange {0..0}\nkey " + strings.Repeat("00", 32) + "\n"))
	f.Add([]byte("fleetsim-credentials 1\r\n# c\r\n\r\nrange w-{1..2}\r\nkey " + strings.Repeat("Ab", 32)))
	f.Fuzz(func(t *testing.T, data []byte) {
		c, err := wire.ParseCredentials(data)
		if err != nil {
			return
		}
		again, err := wire.ParseCredentials(c.File())
		if err != nil || again != c {
			t.Fatalf("accepted %q as %+v, but its File reads as %+v, %v", data, c, again, err)
		}
		if err := wire.CheckCredentialRange(c.Range); err != nil {
			t.Fatalf("accepted %q with a range no credential has: %v", data, err)
		}
	})
}

// FuzzParseRangePassword: no password crashes the parser, and a range it
// accepts is the canonical text the password starts with, one that a
// credential can have.
func FuzzParseRangePassword(f *testing.F) {
	f.Add(issue(f, "w-{0..9}").Password("w-1"))
	f.Add(issue(f, "{5..5}").Password("gateway/gw-5/{5..5}"))
	f.Add(wire.WorkerPassword(credSecret, "w-1"))
	f.Add("w-{0..9}:")
	f.Add("w-{0..9}:w-{0..9}:00")
	f.Fuzz(func(t *testing.T, pw string) {
		r, isRange, err := wire.ParseRangePassword(pw)
		if !isRange || err != nil {
			if isRange != strings.Contains(pw, ":") {
				t.Fatalf("%q: isRange %v", pw, isRange)
			}
			return
		}
		if !strings.HasPrefix(pw, r.String()+":") || len(pw) != len(r.String())+1+64 {
			t.Fatalf("accepted %q as range %s", pw, r)
		}
		if err := wire.CheckCredentialRange(r); err != nil {
			t.Fatalf("accepted %q with a range no credential has: %v", pw, err)
		}
	})
}
