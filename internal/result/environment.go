package result

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
)

// Environment describes the machine a comparison ran on; compare writes it as environment.json
// beside the results so a report can say where its numbers come from.
type Environment struct {
	Hostname    string            `json:"hostname"`
	CPUModel    string            `json:"cpu_model"`
	Cores       int               `json:"cores"`
	MemoryBytes int64             `json:"memory_bytes"`
	Kernel      string            `json:"kernel"`
	OS          string            `json:"os"`
	Filesystem  string            `json:"filesystem"` // of the directory holding the servers' data
	GoVersion   string            `json:"go_version"`
	ToolVersion string            `json:"tool_version"`
	Engines     map[string]string `json:"engines"` // kind -> version of each engine used
	// Command is the fairbench command line that produced the results, to reproduce them.
	Command string `json:"command"`
	// Fairness is the profile applied to every engine, for the report's fairness section.
	Fairness map[string]string `json:"fairness,omitempty"`
	// Notes are facts the reader must know (e.g. "binary log off on MySQL and MariaDB").
	Notes []string `json:"notes,omitempty"`
	// Rounds is how compare chose its rounds; absent for a fixed count (and in older files).
	Rounds *Rounds `json:"rounds,omitempty"`
}

// Rounds records compare's rounds until decided: the minimum every step ran, the budget, and
// the rounds it added to the picks that were still open, so that the report judges each pick at
// the look of the sequential plan that its rounds reached (interval.Sequential).
type Rounds struct {
	Rule      string  `json:"rule"` // "sequential"
	MinRounds int     `json:"min_rounds"`
	BudgetS   float64 `json:"budget_s"`
	SpentS    float64 `json:"spent_s"`
	// Stopped says why no more rounds ran: "decided" (no pick open), "budget" (the next look's
	// rounds would not fit), "interrupted", or a failure.
	Stopped string       `json:"stopped"`
	Added   []AddedRound `json:"added,omitempty"`
}

// AddedRound is one round added after the minimum: its number, and the steps and engines that
// ran in it (only the picks still open, only the engines in question).
type AddedRound struct {
	Round     int      `json:"round"`
	Workloads []string `json:"workloads"`
	Engines   []string `json:"engines"`
	// Knobs are the --explain knobs whose flipped runs followed the engines' own in the round,
	// for effects still open.
	Knobs []string `json:"knobs,omitempty"`
	// Deferred are the open picks the budget could not hold in this round beside those it ran
	// (the nearest to a decision go first): each a workload, with "with KNOB flipped" for a
	// knob's effect. Empty when every open pick ran.
	Deferred []string `json:"deferred,omitempty"`
}

// ReadEnvironment reads a compare directory's environment.json; nil without error where there is
// none (results copied by hand still make a report).
func ReadEnvironment(dir string) (*Environment, error) {
	path := filepath.Join(dir, "environment.json")
	data, err := os.ReadFile(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil, nil
	case err != nil:
		return nil, err
	}
	var env Environment
	if err := json.Unmarshal(data, &env); err != nil {
		return nil, fmt.Errorf("%s is not a fairbench environment file: %v", path, err)
	}
	return &env, nil
}
