package result

import "time"

// Shard says which part of a multi-host run a result is: shard Index (1-based) of Count, run on
// Host. A merged result has no Shard but lists its parts in Shards.
type Shard struct {
	Index int    `json:"index"`
	Count int    `json:"count"`
	Host  string `json:"host"`
}

// Window is the measured time in wall-clock terms, warm-up excluded, so shards run on several
// hosts can be lined up and their overlap checked.
type Window struct {
	From time.Time `json:"from"`
	To   time.Time `json:"to"`
}

// Seconds is the window's length.
func (w Window) Seconds() float64 { return w.To.Sub(w.From).Seconds() }

// ShardSummary keeps one shard's own figures in a merged result, so a slow shard shows.
type ShardSummary struct {
	Shard        Shard   `json:"shard"`
	Window       Window  `json:"window"`
	Threads      int     `json:"threads"`
	Rate         float64 `json:"rate"`
	Transactions int64   `json:"transactions"`
	TPS          float64 `json:"tps"`
	Errors       int64   `json:"errors"`
	Retries      int64   `json:"retries"`
	LatencyMS    Latency `json:"latency_ms"`
	Complete     bool    `json:"complete"`
}

// Network is the simulated distance between the clients and the server (compare --network,
// --clients): the clients ran in network namespaces of their own, joined to the server's
// machine by veth pairs on a bridge.
type Network struct {
	// Hosts is how many simulated client hosts (namespaces) the clients ran in.
	Hosts int `json:"hosts"`
	// RTTMS is the round trip added between clients and server (ms); 0 = the veth's own.
	RTTMS float64 `json:"rtt_ms"`
	// BandwidthBits is the link's rate limit (bits/s, tbf or netem); 0 = none.
	BandwidthBits int64 `json:"bandwidth_bits,omitempty"`
	// Mechanism is what made the delay: "netem" (the kernel's qdisc) or "relay" (fairbench's
	// forwarder on the bridge, holding each direction for half the round trip, where the
	// kernel has no netem); "none" without a delay.
	Mechanism string `json:"mechanism"`
}
