package broker

import (
	"bytes"
	"encoding/binary"
	"errors"
	"io"
	"net"
	"os"
	"testing"
	"time"
)

// rawClient is an MQTT 3.1.1 client written byte by byte, for tests that
// must send what paho never would (half a packet) or as fast as a socket
// takes it.
type rawClient struct {
	t testing.TB
	net.Conn
	nextID uint16
}

// mqttString is an MQTT length-prefixed string.
func mqttString(s string) []byte {
	return append(binary.BigEndian.AppendUint16(nil, uint16(len(s))), s...)
}

// connectPacket is a CONNECT with a clean session, keepalive 0 and, when
// user is not empty, a username and password.
func connectPacket(id, user, pass string) []byte {
	var vh bytes.Buffer
	vh.Write(mqttString("MQTT"))
	flags := byte(0x02) // clean session
	if user != "" {
		flags |= 0xC0
	}
	vh.Write([]byte{4, flags, 0, 0}) // level 4 (3.1.1), flags, keepalive 0
	vh.Write(mqttString(id))
	if user != "" {
		vh.Write(mqttString(user))
		vh.Write(mqttString(pass))
	}
	return append(header(0x10, vh.Len()), vh.Bytes()...)
}

// publishPacket is a PUBLISH of payload on topic; id is its packet id for
// QoS 1 (0: QoS 0).
func publishPacket(topic string, payload []byte, id uint16) []byte {
	body := mqttString(topic)
	first := byte(0x30)
	if id != 0 {
		first |= 0x02
		body = binary.BigEndian.AppendUint16(body, id)
	}
	body = append(body, payload...)
	return append(header(first, len(body)), body...)
}

// dialRaw connects to the broker's TCP listener and logs in (user "": no
// credentials), failing the test unless the broker accepts.
func dialRaw(t testing.TB, b *Broker, id, user, pass string) *rawClient {
	t.Helper()
	c := dialTCP(t, b)
	c.send(connectPacket(id, user, pass))
	ack := make([]byte, 4)
	if _, err := io.ReadFull(c, ack); err != nil || !bytes.Equal(ack, []byte{0x20, 2, 0, 0}) {
		t.Fatalf("%s: CONNACK %x, %v; want accepted", id, ack, err)
	}
	return c
}

// dialTCP opens a TCP connection to the broker, closed by the test's
// cleanup; every read on it is bounded by the patience.
func dialTCP(t testing.TB, b *Broker) *rawClient {
	t.Helper()
	nc, err := net.Dial("tcp", b.Addr())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { nc.Close() })
	nc.SetReadDeadline(time.Now().Add(patience))
	return &rawClient{t: t, Conn: nc}
}

func (c *rawClient) send(p []byte) {
	c.t.Helper()
	if _, err := c.Write(p); err != nil {
		c.t.Fatalf("write: %v", err)
	}
}

// fence publishes a QoS 1 message on topic and waits for its PUBACK: the
// broker handles a client's packets in order, so it has handled every
// earlier one (delivered, dropped or refused it). The broker acknowledges
// a publish it drops for the rate limit all the same.
func (c *rawClient) fence(topic string) {
	c.t.Helper()
	c.nextID++
	c.send(publishPacket(topic, []byte("fence"), c.nextID))
	ack := make([]byte, 4)
	if _, err := io.ReadFull(c, ack); err != nil {
		c.t.Fatalf("PUBACK: %v", err)
	}
	if want := []byte{0x40, 2, byte(c.nextID >> 8), byte(c.nextID)}; !bytes.Equal(ack, want) {
		c.t.Fatalf("got %x, want PUBACK %x", ack, want)
	}
}

// closedByBroker waits (within the patience) for the broker to close the
// connection, and fails the test if it sends anything or the patience
// runs out.
func (c *rawClient) closedByBroker() {
	c.t.Helper()
	n, err := c.Read(make([]byte, 64))
	if n != 0 || err == nil || errors.Is(err, os.ErrDeadlineExceeded) {
		c.t.Fatalf("read %d bytes, %v; want the connection closed by the broker", n, err)
	}
}
