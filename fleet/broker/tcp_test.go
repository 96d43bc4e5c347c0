package broker

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"io"
	"math/big"
	"net"
	"testing"
	"time"

	"github.com/fleetsim/fleetsim/fleet/transport"
)

// A plain paho client reaches the broker over TCP on 127.0.0.1:0, with
// auth, alongside an in-memory client.
func TestTCPListener(t *testing.T) {
	b := startBroker(t, BrokerOptions{TCPAddr: "127.0.0.1:0", Auth: testAuth()})
	leader := connect(t, b, leaderOpts()) // in memory
	ups := make(inbox, 1)
	subscribe(t, leader, testTopics.AllUp(), 1, ups.handler)

	o := workerOpts("tcp-1")
	o.Broker = "tcp://" + b.Addr()
	w := connect(t, b, o)
	downs := make(inbox, 1)
	subscribe(t, w, testTopics.Down("tcp-1"), 1, downs.handler)
	publish(t, w, testTopics.Up("tcp-1"), 1, "over tcp")
	if m := ups.next(t); string(m.Payload()) != "over tcp" {
		t.Fatalf("leader got %q", m.Payload())
	}
	publish(t, leader, testTopics.Down("tcp-1"), 1, "back")
	if m := downs.next(t); string(m.Payload()) != "back" {
		t.Fatalf("worker got %q", m.Payload())
	}
}

// A TCP client that never sends CONNECT is cut off after the handshake
// timeout (mochi alone would wait forever), and a broker closing while such
// a client is connected does not hang.
func TestTCPHandshakeTimeout(t *testing.T) {
	b := startBroker(t, BrokerOptions{TCPAddr: "127.0.0.1:0", HandshakeTimeout: 50 * time.Millisecond})
	idle, err := net.Dial("tcp", b.Addr())
	if err != nil {
		t.Fatal(err)
	}
	defer idle.Close()
	idle.SetReadDeadline(time.Now().Add(patience))
	if n, err := idle.Read(make([]byte, 1)); err != io.EOF {
		t.Fatalf("silent client: read %d, %v; want EOF from the broker", n, err)
	}

	silent, err := net.Dial("tcp", b.Addr())
	if err != nil {
		t.Fatal(err)
	}
	defer silent.Close()
	if err := b.Close(ctxT(t)); err != nil {
		t.Fatalf("Close with a client in its handshake: %v", err)
	}
}

func TestTLSListener(t *testing.T) {
	cert, pool := selfSigned(t)
	b := startBroker(t, BrokerOptions{
		TCPAddr: "127.0.0.1:0",
		TLS:     &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS13},
	})
	o := transport.ClientOptions{ID: "tls-1", CleanSession: true, Broker: "ssl://" + b.Addr(),
		TLS: &tls.Config{RootCAs: pool, ServerName: "127.0.0.1", MinVersion: tls.VersionTLS13}}
	c := connect(t, b, o)
	in := make(inbox, 1)
	subscribe(t, c, "echo", 1, in.handler)
	publish(t, c, "echo", 1, "secret")
	if m := in.next(t); string(m.Payload()) != "secret" {
		t.Fatalf("got %q", m.Payload())
	}
}

func selfSigned(t *testing.T) (tls.Certificate, *x509.CertPool) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1),
		Subject:      pkix.Name{CommonName: "fleetsim test"},
		IPAddresses:  []net.IP{net.IPv4(127, 0, 0, 1)},
		NotBefore:    time.Now().Add(-time.Hour),
		NotAfter:     time.Now().Add(time.Hour),
		KeyUsage:     x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		IsCA:         true, BasicConstraintsValid: true,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	leaf, err := x509.ParseCertificate(der)
	if err != nil {
		t.Fatal(err)
	}
	pool := x509.NewCertPool()
	pool.AddCert(leaf)
	return tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key, Leaf: leaf}, pool
}
