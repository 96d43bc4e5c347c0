package broker

import (
	"crypto/tls"
	"math"
	"strings"
	"testing"
)

func TestBrokerOptionsValidate(t *testing.T) {
	for _, tc := range []struct {
		name    string
		opts    BrokerOptions
		wantErr string // "" = valid
	}{
		{"memory only", BrokerOptions{}, ""},
		{"loopback v4", BrokerOptions{TCPAddr: "127.0.0.1:1883"}, ""},
		{"loopback v6", BrokerOptions{TCPAddr: "[::1]:1883"}, ""},
		{"localhost", BrokerOptions{TCPAddr: "localhost:0"}, ""},
		{"all interfaces, no auth", BrokerOptions{TCPAddr: ":1883"}, "not a loopback address"},
		{"0.0.0.0, no auth", BrokerOptions{TCPAddr: "0.0.0.0:1883"}, "not a loopback address"},
		{"[::], no auth", BrokerOptions{TCPAddr: "[::]:1883"}, "not a loopback address"},
		{"LAN address, no auth", BrokerOptions{TCPAddr: "192.168.1.10:1883"}, "set Auth"},
		{"host name, no auth", BrokerOptions{TCPAddr: "broker.local:1883"}, "AllowInsecure"},
		{"all interfaces with auth", BrokerOptions{TCPAddr: ":1883", Auth: testAuth()}, ""},
		{"all interfaces, insecure allowed", BrokerOptions{TCPAddr: ":1883", AllowInsecure: true}, ""},
		{"no port", BrokerOptions{TCPAddr: "127.0.0.1"}, `TCPAddr "127.0.0.1"`},
		{"TLS without TCP", BrokerOptions{TLS: &tls.Config{}}, "TCPAddr is empty"},
		{"auth without leader password", BrokerOptions{Auth: &Auth{Secret: testSecret}}, "LeaderPassword"},
		{"short secret", BrokerOptions{Auth: &Auth{LeaderPassword: "x", Secret: []byte("short")}}, "Auth.Secret is 5 bytes"},
		{"prefix with a slash", BrokerOptions{Auth: &Auth{LeaderPassword: "x", Secret: testSecret, Topics: testTopicsWithPrefix("a/b")}}, "Prefix"},
		{"inflight too large", BrokerOptions{MaxInflight: 70000}, "MaxInflight"},
		{"partial budget under a packet", BrokerOptions{MaxPacketSize: 2 << 20, MaxPartialBytes: 1 << 20}, "MaxPartialBytes 1048576: must be at least MaxPacketSize (2097152)"},
		{"partial budget defaults to a large packet", BrokerOptions{MaxPacketSize: 100 << 20}, ""},
		{"partial budget off", BrokerOptions{MaxPartialBytes: -1}, ""},
		{"rate not a number", BrokerOptions{RateLimit: RateLimit{Messages: math.NaN()}}, "rates must be finite"},
		{"rate limits off", BrokerOptions{RateLimit: RateLimit{Messages: -1, Bytes: -1}}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.opts.withDefaults().validate()
			switch {
			case tc.wantErr == "" && err != nil:
				t.Errorf("unexpected error: %v", err)
			case tc.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tc.wantErr)):
				t.Errorf("error %v, want one containing %q", err, tc.wantErr)
			}
		})
	}
}

// StartBroker itself refuses an open listener without credentials, and
// listens once credentials (or the loud flag) are given.
func TestStartBrokerNonLoopback(t *testing.T) {
	if _, err := StartBroker(BrokerOptions{TCPAddr: "0.0.0.0:0"}); err == nil {
		t.Fatal("StartBroker on 0.0.0.0 without Auth succeeded")
	}
	for _, o := range []BrokerOptions{
		{TCPAddr: "0.0.0.0:0", Auth: testAuth()},
		{TCPAddr: "0.0.0.0:0", AllowInsecure: true},
	} {
		b := startBroker(t, o)
		if !strings.HasPrefix(b.Addr(), "0.0.0.0:") && !strings.HasPrefix(b.Addr(), "[::]:") {
			t.Errorf("Addr = %q", b.Addr())
		}
	}
}

func TestStartBrokerPortInUse(t *testing.T) {
	b := startBroker(t, BrokerOptions{TCPAddr: "127.0.0.1:0"})
	_, err := StartBroker(BrokerOptions{TCPAddr: b.Addr()})
	if err == nil || !strings.Contains(err.Error(), "TCPAddr") {
		t.Fatalf("second broker on %s: %v, want an error naming TCPAddr", b.Addr(), err)
	}
}
