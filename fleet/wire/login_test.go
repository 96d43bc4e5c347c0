package wire

import "testing"

func TestWorkerPassword(t *testing.T) {
	// HMAC-SHA256("key", "The quick brown fox jumps over the lazy dog"), RFC 4231 style check.
	got := WorkerPassword([]byte("key"), "The quick brown fox jumps over the lazy dog")
	const want = "f7bc83f430538424b13298e6aa6fb143ef4d59a14946175997479dbc2d1a3cd8"
	if got != want {
		t.Errorf("WorkerPassword = %s, want %s", got, want)
	}
	secret := []byte("0123456789abcdef-test-secret")
	if WorkerPassword(secret, "a") == WorkerPassword(secret, "b") {
		t.Error("two workers share a password")
	}
}
