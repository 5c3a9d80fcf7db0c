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
