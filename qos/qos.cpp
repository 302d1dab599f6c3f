// The QoS scheduler arrives with issue 5.
