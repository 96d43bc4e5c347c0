// Package ratelog bounds the log lines an outside party can cause: at most
// one line per key (a client, a worker, a remote host) per interval, the
// lines held back in between counted and reported on the next line let
// through. A flood of refused logins or malformed messages then costs the
// log a line per sender per interval, not a line per message; the
// counters on /metrics still count every one.
//
//	lim := ratelog.New(ratelog.Options{Clock: clk, Every: 10 * time.Second})
//	lim.Warn(log, clientID, "topic refused", "client", clientID, "topic", topic)
//	// time=… level=WARN msg="topic refused" client=w-1 topic=… suppressed=41
package ratelog
