package wire

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
)

// LeaderUsername is the MQTT username of the leader. It is reserved: a
// worker whose id is "leader" cannot log in.
const LeaderUsername = "leader"

// WorkerPassword returns worker id's password derived from the fleet
// secret itself: the hex HMAC-SHA256 of id keyed with the secret (for a
// gateway, of its whole username; see GatewayUsername). It logs in as
// anyone, so only a process that holds the secret (the leader's own, sim)
// uses it; a worker host presents Credentials.Password instead.
func WorkerPassword(secret []byte, id string) string {
	m := hmac.New(sha256.New, secret)
	m.Write([]byte(id))
	return hex.EncodeToString(m.Sum(nil))
}
