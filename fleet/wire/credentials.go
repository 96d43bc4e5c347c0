package wire

import (
	"bytes"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"strconv"
	"strings"
)

// Credentials are what a worker host holds instead of the fleet secret:
// a range of ids and the range key, the HMAC of the range under the fleet
// secret. From them a host derives the password of every id in its range
// (and of a gateway carrying devices of its range), and of no other: the
// broker, which holds the fleet secret, recomputes the range key from the
// range the password names (see Password) and checks that the login is
// inside it (see DeviceRange.Admits). A credential for one id is a range
// of one number (w-{42..42}).
//
// The leader issues them ('leader credentials'); File and ParseCredentials
// write and read the file a host keeps them in.
type Credentials struct {
	Range DeviceRange
	Key   [sha256.Size]byte
}

// rangeKeyLabel starts the message a range key is the HMAC of: it keeps
// range keys apart from the passwords the fleet secret gives directly
// (WorkerPassword of an id or a gateway's username, neither of which can
// contain ':').
const rangeKeyLabel = "fleetsim-range:"

// RangeKey returns the key of range r: HMAC-SHA256 keyed with the fleet
// secret of "fleetsim-range:" followed by r.String().
func RangeKey(secret []byte, r DeviceRange) [sha256.Size]byte {
	m := hmac.New(sha256.New, secret)
	m.Write([]byte(rangeKeyLabel))
	m.Write([]byte(r.String()))
	var k [sha256.Size]byte
	m.Sum(k[:0])
	return k
}

// IssueCredentials returns the credentials of range r under the fleet
// secret. It fails for a range no valid worker id is in (see
// CheckCredentialRange).
func IssueCredentials(secret []byte, r DeviceRange) (Credentials, error) {
	if err := CheckCredentialRange(r); err != nil {
		return Credentials{}, err
	}
	return Credentials{Range: r, Key: RangeKey(secret, r)}, nil
}

// CheckCredentialRange checks that r can be a credential's range: a
// prefix that may start a worker id, and its last id, written without
// leading zeros, at most MaxIDLen characters.
func CheckCredentialRange(r DeviceRange) error {
	if _, err := ParseDeviceRange(r.String()); err != nil {
		return err
	}
	if n := len(r.Prefix) + len(strconv.FormatUint(r.Last, 10)); n > MaxIDLen {
		return fmt.Errorf("range %s: its last id is %d characters; a worker id has at most %d", clipQuote(r.String()), n, MaxIDLen)
	}
	return nil
}

// rangePasswordSep separates the range from the MAC in a range password.
const rangePasswordSep = ":"

// Password returns the MQTT password of username (a worker id, or a
// gateway's whole username, see GatewayUsername) under these credentials:
//
//	<range>:<hex(HMAC-SHA256(range key, username))>
//
// e.g. "w-{0..999}:3b1f…" (64 hex digits after the colon). The range is
// r.String(), the canonical form, whose key the broker recomputes.
func (c Credentials) Password(username string) string {
	m := hmac.New(sha256.New, c.Key[:])
	m.Write([]byte(username))
	return c.Range.String() + rangePasswordSep + hex.EncodeToString(m.Sum(nil))
}

// ParseRangePassword reads the range of a password made by
// Credentials.Password. isRange is false, with no error, for a password
// without a colon: one derived from the fleet secret itself
// (WorkerPassword). A range password whose range does not parse, is not
// in canonical form (DeviceRange.String) or is not a credential's (see
// CheckCredentialRange), or whose MAC is not 64 lower-case hex digits, is
// an error. It checks the form only; whether the MAC is right takes the
// fleet secret.
func ParseRangePassword(password string) (r DeviceRange, isRange bool, err error) {
	text, mac, ok := strings.Cut(password, rangePasswordSep)
	if !ok {
		return DeviceRange{}, false, nil
	}
	if r, err = ParseDeviceRange(text); err != nil {
		return DeviceRange{}, true, fmt.Errorf("range password: %w", err)
	}
	if r.String() != text {
		return DeviceRange{}, true, fmt.Errorf("range password: range %s is not written as %q (no leading zeros)", clipQuote(text), r.String())
	}
	if err := CheckCredentialRange(r); err != nil {
		return DeviceRange{}, true, fmt.Errorf("range password: %w", err)
	}
	if len(mac) != 2*sha256.Size || !lowerHex(mac) {
		return DeviceRange{}, true, fmt.Errorf("range password: want %d lower-case hex digits after the colon, got %d characters", 2*sha256.Size, len(mac))
	}
	return r, true, nil
}

func lowerHex(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; (c < '0' || c > '9') && (c < 'a' || c > 'f') {
			return false
		}
	}
	return true
}

// GatewayIDPrefix starts the id of a gateway that logs in with a range
// credential: "gw-" followed by the id of one of the devices it carries
// (the Go worker names each gateway after its first device: gw-w-0000).
const GatewayIDPrefix = "gw-"

// Covers reports whether every id of s is an id of r: the same prefix
// and s's numbers within r's. (With different prefixes the ids differ in
// general: w-1{0..9} holds w-100, w-{0..9} does not.)
func (r DeviceRange) Covers(s DeviceRange) bool {
	return s.Prefix == r.Prefix && s.First >= r.First && s.Last <= r.Last
}

// Admits reports, as an error saying why not, whether a credential for
// range r may log in as username:
//
//   - a worker id inside r (DeviceRange.Contains);
//   - a gateway (GatewayUsername) whose device range r covers
//     (DeviceRange.Covers) and whose id is GatewayIDPrefix followed by
//     the id of one of its devices. The gateway's id is bound to its
//     devices so that no host can name its gateway after another host's
//     and speak on that gateway's status topic.
func (r DeviceRange) Admits(username string) error {
	if IsGatewayUsername(username) {
		gw, devices, err := ParseGatewayUsername(username)
		if err != nil {
			return err
		}
		if !r.Covers(devices) {
			return fmt.Errorf("gateway devices %s are not all in the credential's range %s (want the prefix %q and numbers from %d to %d)",
				devices, r, r.Prefix, r.First, r.Last)
		}
		if dev, ok := strings.CutPrefix(gw, GatewayIDPrefix); !ok || !devices.Contains(dev) {
			return fmt.Errorf("gateway id %q: with a range credential, want %q followed by one of its devices' ids (e.g. %s%s%d)",
				gw, GatewayIDPrefix, GatewayIDPrefix, devices.Prefix, devices.First)
		}
		return nil
	}
	if err := ValidWorkerID(username); err != nil {
		return err
	}
	if !r.Contains(username) {
		return fmt.Errorf("worker id %q is outside the credential's range %s", username, r)
	}
	return nil
}

// Credentials file. Plain text, one "<word> <value>" per line, lines
// starting with # and blank lines ignored, a trailing \r ignored:
//
//	fleetsim-credentials 1
//	range w-{0..999}
//	key 5c0e…   (the range key, 64 hex digits)
const (
	credentialsMagic = "fleetsim-credentials"
	// credentialsVersion is the format version after the magic word.
	credentialsVersion = "1"
	// MaxCredentialsSize bounds a credentials file.
	MaxCredentialsSize = 4096
)

// File returns the credentials file for c, as ParseCredentials reads it.
func (c Credentials) File() []byte {
	var b bytes.Buffer
	fmt.Fprintf(&b, "%s %s\n", credentialsMagic, credentialsVersion)
	fmt.Fprintf(&b, "# fleetsim worker credentials, issued by 'leader credentials'. They log in as\n")
	fmt.Fprintf(&b, "# any id of the range below (or a gateway of its ids): keep them as secret as a password.\n")
	fmt.Fprintf(&b, "range %s\n", c.Range)
	fmt.Fprintf(&b, "key %s\n", hex.EncodeToString(c.Key[:]))
	return b.Bytes()
}

// ParseCredentials reads a credentials file (see File). Every error names
// the line ("line 3: ...") and what would be valid; the caller adds the
// file's name.
func ParseCredentials(data []byte) (Credentials, error) {
	var c Credentials
	if len(data) > MaxCredentialsSize {
		return c, fmt.Errorf("%d bytes; a credentials file has at most %d", len(data), MaxCredentialsSize)
	}
	var header, haveRange, haveKey bool
	for i, line := range strings.Split(string(data), "\n") {
		n := i + 1
		line = strings.TrimSuffix(line, "\r")
		if strings.TrimSpace(line) == "" || strings.HasPrefix(line, "#") {
			continue
		}
		word, value, _ := strings.Cut(line, " ")
		if !header {
			if word != credentialsMagic || value != credentialsVersion {
				return c, fmt.Errorf("line %d: %s: want %q first (a file written by 'leader credentials')", n, clipQuote(line), credentialsMagic+" "+credentialsVersion)
			}
			header = true
			continue
		}
		switch word {
		case "range":
			if haveRange {
				return c, fmt.Errorf("line %d: a second range; a credentials file has one", n)
			}
			r, err := ParseDeviceRange(value)
			if err == nil {
				err = CheckCredentialRange(r)
			}
			if err != nil {
				return c, fmt.Errorf("line %d: %w", n, err)
			}
			if r.String() != value {
				return c, fmt.Errorf("line %d: range %s: want it written as %q (no leading zeros)", n, clipQuote(value), r.String())
			}
			c.Range, haveRange = r, true
		case "key":
			if haveKey {
				return c, fmt.Errorf("line %d: a second key; a credentials file has one", n)
			}
			k, err := hex.DecodeString(value)
			if err != nil || len(k) != len(c.Key) {
				return c, fmt.Errorf("line %d: key: want %d hex digits, got %d characters", n, 2*len(c.Key), len(value))
			}
			copy(c.Key[:], k)
			haveKey = true
		default:
			return c, fmt.Errorf("line %d: %s: want \"range <prefix>{<first>..<last>}\" or \"key <64 hex digits>\"", n, clipQuote(word))
		}
	}
	switch {
	case !header:
		return c, fmt.Errorf("empty: want %q, then a range and a key", credentialsMagic+" "+credentialsVersion)
	case !haveRange:
		return c, fmt.Errorf("no range line (want \"range <prefix>{<first>..<last>}\")")
	case !haveKey:
		return c, fmt.Errorf("no key line (want \"key <64 hex digits>\")")
	}
	return c, nil
}

// ParseIDRange reads a range of ids as an operator writes it:
// "w-0000..w-0999" (two ids, the same prefix before their trailing
// digits), "w-{0..999}" (ParseDeviceRange), or one id "w-0042", a range
// of one number. The ids' prefix is what comes before their trailing
// digits.
func ParseIDRange(s string) (DeviceRange, error) {
	if strings.Contains(s, "{") {
		return ParseDeviceRange(s)
	}
	const want = `want <id>..<id> (e.g. w-0000..w-0999), <prefix>{<first>..<last>} (e.g. w-{0..999}) or one id (e.g. w-0042)`
	first, last, isRange := strings.Cut(s, "..")
	if !isRange {
		last = first
	}
	p1, n1, err := splitRangeID(first)
	if err != nil {
		return DeviceRange{}, fmt.Errorf("id range %s: %v; %s", clipQuote(s), err, want)
	}
	p2, n2, err := splitRangeID(last)
	if err != nil {
		return DeviceRange{}, fmt.Errorf("id range %s: %v; %s", clipQuote(s), err, want)
	}
	if p1 != p2 {
		return DeviceRange{}, fmt.Errorf("id range %s: prefixes %q and %q differ; both ids need the same prefix before their number", clipQuote(s), p1, p2)
	}
	if n1 > n2 {
		return DeviceRange{}, fmt.Errorf("id range %s: first %d is after last %d", clipQuote(s), n1, n2)
	}
	return ParseDeviceRange(DeviceRange{Prefix: p1, First: n1, Last: n2}.String())
}

// splitRangeID splits a worker id into its prefix and trailing number.
func splitRangeID(id string) (string, uint64, error) {
	if err := ValidWorkerID(id); err != nil {
		return "", 0, err
	}
	i := len(id)
	for i > 0 && id[i-1] >= '0' && id[i-1] <= '9' {
		i--
	}
	n, err := parseRangeNumber(id[i:])
	if err != nil {
		return "", 0, fmt.Errorf("id %q: no number at its end (%v)", id, err)
	}
	return id[:i], n, nil
}
