package result

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
}
