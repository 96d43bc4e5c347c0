package transport

// SubscribeNoWait asks the broker for filter, its messages going to
// ClientOptions.DefaultHandler, and returns without waiting for the
// answer: for a gateway, whose one session carries many devices and must
// not hold any of them up. The broker takes a connection's packets in
// order, so what the session publishes after this reaches the broker
// after the SUBSCRIBE. A refusal is not reported; only an error the client
// knows at once (not connected) is. Redial makes the subscription again.
func (s *Session) SubscribeNoWait(filter string, qos byte) error {
	sub := subscription{filter: filter, qos: qos}
	if err := now(s.c.Subscribe(filter, qos, nil)); err != nil {
		return err
	}
	s.mu.Lock()
	s.subs = append(s.subs, sub)
	s.mu.Unlock()
	return nil
}

// SendRetainedDone is SendRetained that also returns a channel closed
// when the broker has taken the message (its PUBACK), or when the
// client gives up on it. It may stay open if the connection is lost
// first: wait on Lost too.
func (s *Session) SendRetainedDone(topic string, qos byte, payload []byte) (<-chan struct{}, error) {
	t := s.c.Publish(topic, qos, true, payload)
	return t.Done(), now(t)
}
