package wire

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
)

// LeaderUsername is the MQTT username of the leader. It is reserved: a
// worker whose id is "leader" cannot log in.
const LeaderUsername = "leader"

// WorkerPassword returns worker id's password: the hex HMAC-SHA256 of id
// keyed with the fleet secret. A gateway's password is
// WorkerPassword(secret, its whole username; see GatewayUsername). The
// broker checks logins with it and clients present it.
func WorkerPassword(secret []byte, id string) string {
	m := hmac.New(sha256.New, secret)
	m.Write([]byte(id))
	return hex.EncodeToString(m.Sum(nil))
}
