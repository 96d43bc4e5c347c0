package wire

import (
	"fmt"
	"strconv"
	"strings"
)

// A gateway is one MQTT session that carries many devices (workers), as an
// edge gateway carries the sensors behind it. Each device keeps its own
// topics (Down, Up, Status); the gateway subscribes to its devices' down
// topics, publishes on their up and status topics, and announces each
// device online or offline on its behalf ("online <epoch> via <gateway>").
// Its own retained status, and its last will, are on GatewayStatus: when a
// gateway goes offline, so does every device it announced.

// gatewayLevel is the topic level under the prefix for gateways' statuses.
const gatewayLevel = "_gateway"

// GatewayStatus is gateway gw's own retained status topic ("online <epoch>"
// or "offline <epoch>"; its last will is the offline).
func (t Topics) GatewayStatus(gw string) string {
	return t.prefix() + "/" + gatewayLevel + "/" + gw + "/" + ChanStatus
}

// AllGatewayStatus matches every gateway's status topic.
func (t Topics) AllGatewayStatus() string {
	return t.prefix() + "/" + gatewayLevel + "/+/" + ChanStatus
}

// ParseGatewayStatus returns the gateway id of a gateway status topic, or
// an error for any other topic.
func (t Topics) ParseGatewayStatus(topic string) (string, error) {
	rest, ok := strings.CutPrefix(topic, t.prefix()+"/"+gatewayLevel+"/")
	if !ok {
		return "", fmt.Errorf("topic %q: not under %s/%s/", topic, t.prefix(), gatewayLevel)
	}
	gw, ch, ok := strings.Cut(rest, "/")
	if !ok || ch != ChanStatus {
		return "", fmt.Errorf("topic %q: want %s/%s/<gateway>/%s", topic, t.prefix(), gatewayLevel, ChanStatus)
	}
	if err := ValidGatewayID(gw); err != nil {
		return "", fmt.Errorf("topic %q: %w", topic, err)
	}
	return gw, nil
}

// ValidGatewayID checks a gateway id. It has the syntax of a worker id
// (see ValidWorkerID); the gateway's MQTT client id is its whole username
// (GatewayUsername), which no worker id can be, so a gateway and a worker
// never share a client id. A gateway logging in with a range credential
// is named GatewayIDPrefix and one of its devices' ids (see
// DeviceRange.Admits).
func ValidGatewayID(id string) error {
	if err := ValidWorkerID(id); err != nil {
		return fmt.Errorf("gateway%s", strings.TrimPrefix(err.Error(), "worker"))
	}
	return nil
}

// DeviceRange is the set of device ids a gateway may act for: Prefix
// followed by a decimal number from First to Last inclusive, with or
// without leading zeros ("w-{0..999}" holds w-0, w-00042 and w-999).
type DeviceRange struct {
	Prefix      string
	First, Last uint64
}

// maxRangeDigits bounds the number part of a device id in a range (uint64).
const maxRangeDigits = 19

// Contains reports whether id is in the range.
func (r DeviceRange) Contains(id string) bool {
	num, ok := strings.CutPrefix(id, r.Prefix)
	if !ok || num == "" || len(num) > maxRangeDigits {
		return false
	}
	for i := 0; i < len(num); i++ {
		if num[i] < '0' || num[i] > '9' {
			return false
		}
	}
	n, err := strconv.ParseUint(num, 10, 64)
	return err == nil && n >= r.First && n <= r.Last
}

// String is "<prefix>{<first>..<last>}", as ParseDeviceRange reads it.
func (r DeviceRange) String() string {
	return r.Prefix + "{" + strconv.FormatUint(r.First, 10) + ".." + strconv.FormatUint(r.Last, 10) + "}"
}

// ParseDeviceRange reads "<prefix>{<first>..<last>}": a prefix of worker-id
// characters (it may be empty), then two decimal numbers with first ≤ last.
func ParseDeviceRange(s string) (DeviceRange, error) {
	const want = `want <prefix>{<first>..<last>}, e.g. "w-{0..999}"`
	open := strings.IndexByte(s, '{')
	if open < 0 || !strings.HasSuffix(s, "}") {
		return DeviceRange{}, fmt.Errorf("device range %s: %s", clipQuote(s), want)
	}
	r := DeviceRange{Prefix: s[:open]}
	for i := 0; i < len(r.Prefix); i++ {
		if !topicIDChar(r.Prefix[i]) {
			return DeviceRange{}, fmt.Errorf("device range %s: prefix character %q not allowed (%s)", clipQuote(s), r.Prefix[i], topicIDChars)
		}
	}
	if strings.HasPrefix(r.Prefix, "_") {
		return DeviceRange{}, fmt.Errorf("device range %s: prefix must not start with \"_\" (no worker id does)", clipQuote(s))
	}
	first, last, ok := strings.Cut(s[open+1:len(s)-1], "..")
	if !ok {
		return DeviceRange{}, fmt.Errorf("device range %s: %s", clipQuote(s), want)
	}
	var err error
	if r.First, err = parseRangeNumber(first); err != nil {
		return DeviceRange{}, fmt.Errorf("device range %s: first: %w", clipQuote(s), err)
	}
	if r.Last, err = parseRangeNumber(last); err != nil {
		return DeviceRange{}, fmt.Errorf("device range %s: last: %w", clipQuote(s), err)
	}
	if r.First > r.Last {
		return DeviceRange{}, fmt.Errorf("device range %s: first %d is after last %d", clipQuote(s), r.First, r.Last)
	}
	return r, nil
}

func parseRangeNumber(s string) (uint64, error) {
	if s == "" || len(s) > maxRangeDigits {
		return 0, fmt.Errorf("%q: want 1 to %d decimal digits", s, maxRangeDigits)
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return 0, fmt.Errorf("%q: want decimal digits", s)
		}
	}
	return strconv.ParseUint(s, 10, 64)
}

// gatewayUserPrefix starts every gateway's MQTT username.
const gatewayUserPrefix = "gateway/"

// GatewayUsername is the MQTT username a gateway logs in with, and its
// client id: "gateway/<gateway id>/<device range>", e.g.
// "gateway/gw-00000/w-{0..999}". The username is the gateway's claim; its
// password (Credentials.Password of the whole username, or WorkerPassword
// from the fleet secret) is what makes the broker believe it.
func GatewayUsername(gw string, r DeviceRange) string {
	return gatewayUserPrefix + gw + "/" + r.String()
}

// IsGatewayUsername reports whether username claims to be a gateway's.
func IsGatewayUsername(username string) bool {
	return strings.HasPrefix(username, gatewayUserPrefix)
}

// ParseGatewayUsername reads a username made by GatewayUsername.
func ParseGatewayUsername(username string) (gw string, r DeviceRange, err error) {
	rest, ok := strings.CutPrefix(username, gatewayUserPrefix)
	if !ok {
		return "", DeviceRange{}, fmt.Errorf("username %s: want gateway/<gateway id>/<prefix>{<first>..<last>}", clipQuote(username))
	}
	gw, rng, ok := strings.Cut(rest, "/")
	if !ok {
		return "", DeviceRange{}, fmt.Errorf("username %s: want gateway/<gateway id>/<prefix>{<first>..<last>}", clipQuote(username))
	}
	if err := ValidGatewayID(gw); err != nil {
		return "", DeviceRange{}, fmt.Errorf("username %s: %w", clipQuote(username), err)
	}
	if r, err = ParseDeviceRange(rng); err != nil {
		return "", DeviceRange{}, fmt.Errorf("username %s: %w", clipQuote(username), err)
	}
	return gw, r, nil
}
