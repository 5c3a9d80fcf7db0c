package result

// Availability is what a run saw of its server going away and coming back: the faults fairbench
// injected (--fault), the connections its clients had to reopen, the time nothing committed,
// and whether every transaction the clients saw committed is still there afterwards.
type Availability struct {
	// Faults are the faults injected, each with when it fired and when it ended.
	Faults []FaultEvent `json:"faults,omitempty"`
	// Reconnections are connections the clients reopened after one was lost.
	Reconnections int64 `json:"reconnections"`
	// InDoubt are transactions whose COMMIT got no answer (counted in errors, never retried).
	InDoubt int64 `json:"in_doubt"`
	// DowntimeS is the time no client committed anything, in gaps of at least OutageMinS;
	// LongestOutageS the longest such gap; Outages each of them, in seconds from the window's start.
	DowntimeS      float64  `json:"downtime_s"`
	LongestOutageS float64  `json:"longest_outage_s"`
	OutageMinS     float64  `json:"outage_min_s"`
	Outages        []Outage `json:"outages,omitempty"`
	// Acks is the check, after the run, of the transactions the clients saw committed.
	Acks *AckCheck `json:"acks,omitempty"`
}

// Outage is one gap with no commit, in seconds since the measured window's start.
type Outage struct {
	FromS float64 `json:"from_s"`
	ToS   float64 `json:"to_s"`
}

// FaultEvent is one injected fault: Spec as --fault gave it, the node it hit, when it fired and
// when it ended (a kill ends when it is delivered; a stop or partition when the node is thawed
// or healed), in seconds since the measured window's start. Error says why it could not be
// injected or undone.
type FaultEvent struct {
	Spec   string  `json:"spec"`
	Kind   string  `json:"kind"`
	Node   string  `json:"node,omitempty"`
	AtS    float64 `json:"at_s"`
	EndS   float64 `json:"end_s,omitempty"`
	Error  string  `json:"error,omitempty"`
	Leader string  `json:"leader_before,omitempty"` // kill-leader: the node that led when it fired
}

// AckCheck counts the transactions the clients saw committed (acknowledged) and those of them
// the surviving server does not have (lost). In-doubt transactions (COMMIT sent, no answer) are
// neither: InDoubtFound says how many of them did commit.
type AckCheck struct {
	Acknowledged int64 `json:"acknowledged"`
	Lost         int64 `json:"acknowledged_lost"`
	InDoubt      int64 `json:"in_doubt"`
	InDoubtFound int64 `json:"in_doubt_committed"`
	// LostExamples are up to 10 lost ids, as the workload names them.
	LostExamples []int64 `json:"lost_examples,omitempty"`
	// CheckedOn is the server the ids were looked up on (the DSN without password).
	CheckedOn string `json:"checked_on,omitempty"`
	// NotChecked says why the ids could not be looked up; the counts are then the clients' own.
	NotChecked string `json:"not_checked,omitempty"`
	// Setting names what allowed a loss, where the engine says (e.g. asynchronous replication).
	Setting string `json:"setting,omitempty"`
}

// SpreadOutages adds to each interval's DowntimeS the part of the outages inside it (an interval
// ends at T and begins where the one before ended; times in seconds from the same start).
func SpreadOutages(ivs []Interval, outages []Outage) {
	from := 0.0
	for i := range ivs {
		to := ivs[i].T
		for _, g := range outages {
			if overlap := min(to, g.ToS) - max(from, g.FromS); overlap > 0 {
				ivs[i].DowntimeS += overlap
			}
		}
		from = to
	}
}
