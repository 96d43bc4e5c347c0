package broker

import (
	"fmt"
	"reflect"
	"time"
	"unsafe"

	mqtt "github.com/mochi-mqtt/server/v2"
)

// mochiScans are the tickers of mochi's event loop that walk a copy of a
// whole map: every client (expired sessions; expired in-flight messages,
// sorting each client's in-flight map on the way) and every retained
// message (expired ones). mochi fixes them at one second and offers no
// option; idle, they were the broker's only work, and their garbage
// started GC cycles that scan every goroutine's stack.
var mochiScans = []string{"clientExpiry", "inflightExpiry", "retainedExpiry"}

// setScanInterval makes mochi's expiry scans run every d. It reaches into
// mochi's unexported event-loop tickers before Serve starts the loop (so
// nothing races it); should a mochi upgrade rename or retype them, it
// returns an error rather than guess, and StartBroker fails.
func setScanInterval(srv *mqtt.Server, d time.Duration) error {
	loop := reflect.ValueOf(srv).Elem().FieldByName("loop")
	if loop.Kind() != reflect.Pointer || loop.IsNil() || loop.Elem().Kind() != reflect.Struct {
		return fmt.Errorf("broker: mochi's Server has no event loop tickers where expected (field loop); update setScanInterval for this mochi version")
	}
	for _, name := range mochiScans {
		f := loop.Elem().FieldByName(name)
		if !f.IsValid() || f.Type() != reflect.TypeFor[*time.Ticker]() {
			return fmt.Errorf("broker: mochi's event loop has no *time.Ticker %s; update setScanInterval for this mochi version", name)
		}
		t := *(**time.Ticker)(unsafe.Pointer(f.UnsafeAddr()))
		if t == nil {
			return fmt.Errorf("broker: mochi's event loop ticker %s is nil", name)
		}
		t.Reset(d)
	}
	return nil
}
