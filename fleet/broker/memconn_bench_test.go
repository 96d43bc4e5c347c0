package broker

import (
	"io"
	"net"
	"testing"
)

// BenchmarkConn measures one-way throughput of 256-byte writes (about an
// MQTT publish with a small JSON envelope) with a reader draining the other
// end: the in-memory pipe against net.Pipe, in the same run.
func BenchmarkConn(b *testing.B) {
	for _, tc := range []struct {
		name string
		pipe func() (net.Conn, net.Conn)
	}{
		{"mem", func() (net.Conn, net.Conn) { return MemPipe(0) }},
		{"netpipe", net.Pipe},
	} {
		b.Run(tc.name, func(b *testing.B) {
			w, r := tc.pipe()
			done := make(chan int64)
			go func() {
				n, _ := io.CopyBuffer(io.Discard, struct{ io.Reader }{r}, make([]byte, 4096))
				done <- n
			}()
			msg := make([]byte, 256)
			b.SetBytes(int64(len(msg)))
			b.ReportAllocs()
			b.ResetTimer()
			for b.Loop() {
				if _, err := w.Write(msg); err != nil {
					b.Fatal(err)
				}
			}
			w.Close()
			if n := <-done; n != int64(b.N)*256 {
				b.Fatalf("reader got %d bytes, want %d", n, b.N*256)
			}
			r.Close()
		})
	}
}
