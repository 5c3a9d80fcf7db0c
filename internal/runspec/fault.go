package runspec

import (
	"fmt"
	"slices"
	"strings"
	"time"
)

// Fault kinds (--fault KIND@OFFSET[,for=D][,node=N]).
const (
	KillLeader    = "kill-leader"    // SIGKILL the node taking writes now (a cluster with one leader)
	KillNode      = "kill-node"      // SIGKILL a node (node= or the cluster's last): a host crash
	StopNode      = "stop-node"      // SIGSTOP a node for for=, then SIGCONT
	PartitionNode = "partition-node" // cut a node off from peers and clients for for=, then heal
)

// FaultKinds lists the kinds in the order help text names them.
var FaultKinds = []string{KillLeader, KillNode, StopNode, PartitionNode}

// MaxFaults bounds the faults of one run: each is a line of the report, and a typo in a script
// must not schedule thousands.
const MaxFaults = 100

// Fault is one fault injected during a run, At after the measured window opens. For is how long
// a stop or partition lasts (0 for a kill, which lasts the rest of the run). Node is the node it
// hits ("" for kill-leader, or for a kill-node that takes the cluster's choice).
type Fault struct {
	Kind    string
	At, For time.Duration
	Node    string
}

// String is the fault as --fault takes it, so a result or an error can show it back.
func (f Fault) String() string {
	s := f.Kind + "@" + f.At.String()
	if f.For > 0 {
		s += ",for=" + f.For.String()
	}
	if f.Node != "" {
		s += ",node=" + f.Node
	}
	return s
}

const faultFix = "write it like kill-leader@30s, kill-node@30s,node=node2, stop-node@30s,for=10s or partition-node@30s,for=10s"

// ParseFaults reads the values of every --fault given: one fault per value (its options after
// commas belong to it, so faults are given as separate --fault flags).
func ParseFaults(setting string, values []string) ([]Fault, error) {
	if len(values) > MaxFaults {
		return nil, inputErr(setting, "", fmt.Sprintf("%d faults given, at most %d", len(values), MaxFaults), "give fewer --fault")
	}
	out := make([]Fault, 0, len(values))
	for _, v := range values {
		f, err := ParseFault(setting, v)
		if err != nil {
			return nil, err
		}
		out = append(out, f)
	}
	return out, nil
}

// ParseFault reads one fault: KIND@OFFSET, then for=DURATION (stop-node and partition-node:
// required; the kills: refused) and node=NAME (any but kill-leader).
func ParseFault(setting, v string) (Fault, error) {
	head, opts, _ := strings.Cut(strings.TrimSpace(v), ",")
	kind, at, ok := strings.Cut(head, "@")
	if !ok {
		return Fault{}, inputErr(setting, v, "no offset: a fault is KIND@OFFSET", faultFix)
	}
	f := Fault{Kind: strings.TrimSpace(kind)}
	if !slices.Contains(FaultKinds, f.Kind) {
		return Fault{}, inputErr(setting, v, fmt.Sprintf("unknown fault %q (known: %s)", f.Kind, strings.Join(FaultKinds, ", ")), faultFix)
	}
	var err error
	if f.At, err = ParseDuration(setting, at); err != nil {
		return Fault{}, inputErr(setting, v, fmt.Sprintf("offset %q is not a duration", strings.TrimSpace(at)), faultFix)
	}
	if err := f.options(setting, v, opts); err != nil {
		return Fault{}, err
	}
	lasting := f.Kind == StopNode || f.Kind == PartitionNode
	switch {
	case lasting && f.For <= 0:
		return Fault{}, inputErr(setting, v, f.Kind+" needs for=DURATION (how long the node stays "+map[bool]string{true: "frozen", false: "cut off"}[f.Kind == StopNode]+")", faultFix)
	case !lasting && f.For > 0:
		return Fault{}, inputErr(setting, v, f.Kind+" lasts the rest of the run and takes no for=", faultFix)
	case f.Kind == KillLeader && f.Node != "":
		return Fault{}, inputErr(setting, v, "kill-leader hits whichever node leads at that moment and takes no node=", "use kill-node@OFFSET,node=NAME for a given node")
	}
	return f, nil
}

// options reads a fault's comma-separated key=value options.
func (f *Fault) options(setting, v, opts string) error {
	if strings.TrimSpace(opts) == "" {
		return nil
	}
	seen := map[string]bool{}
	for _, o := range strings.Split(opts, ",") {
		key, val, ok := strings.Cut(strings.TrimSpace(o), "=")
		val = strings.TrimSpace(val)
		if !ok || val == "" {
			return inputErr(setting, v, fmt.Sprintf("option %q is not key=value", strings.TrimSpace(o)), faultFix)
		}
		if seen[key] {
			return inputErr(setting, v, fmt.Sprintf("%s= is given twice", key), faultFix)
		}
		seen[key] = true
		switch key {
		case "for":
			d, err := ParsePositiveDuration(setting, val)
			if err != nil {
				return inputErr(setting, v, fmt.Sprintf("for=%s is not a duration above zero", val), faultFix)
			}
			f.For = d
		case "node":
			if !validNodeName(val) {
				return inputErr(setting, v, fmt.Sprintf("node=%q is not a node name", val), "name a node as the cluster lists it, e.g. node=node2")
			}
			f.Node = val
		default:
			return inputErr(setting, v, fmt.Sprintf("unknown option %q (known: for=, node=)", key), faultFix)
		}
	}
	return nil
}

// validNodeName accepts the names clusters give their nodes: letters, digits, '-', '_', '.'.
func validNodeName(s string) bool {
	if len(s) > 64 {
		return false
	}
	for _, r := range s {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' || r == '_' || r == '.') {
			return false
		}
	}
	return true
}

// CheckFaults checks faults against the run they belong to: each must fire inside the measured
// window, and a stop or partition must end before the window does, so its end is measured.
func CheckFaults(setting string, faults []Fault, window time.Duration) error {
	for _, f := range faults {
		if f.At >= window {
			return inputErr(setting, f.String(), fmt.Sprintf("fires at %s, at or after the measured time (%s) ends", f.At, window), "give an offset inside --time")
		}
		if f.At+f.For > window {
			return inputErr(setting, f.String(), fmt.Sprintf("lasts until %s, past the measured time (%s)", f.At+f.For, window), "shorten for= or lengthen --time, so the recovery is measured")
		}
	}
	return nil
}
