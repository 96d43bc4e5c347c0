package leader

// reconnected reaches the asks to worker, which is online on a new
// connection: what went to the old one will not be answered (a clean
// session drops what the broker had not delivered), so rather than wait
// out its timeout each ask publishes its command again at once. A
// waiting ask is signalled and does so itself; a started one is marked
// and the waker publishes it (publishAgain), since this runs on the MQTT
// delivery goroutine, where nothing may be published. It never blocks.
func (l *Leader) reconnected(worker string) {
	if l.asks.markAgain(worker) {
		l.wakes.add(worker)
	}
}
