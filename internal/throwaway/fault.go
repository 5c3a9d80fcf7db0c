package throwaway

import (
	"github.com/fairbench/fairbench/internal/engine/discovery"
	"github.com/fairbench/fairbench/internal/fault"
)

// FaultCluster is the server as --fault sees it: the cluster's nodes, or nil for a single
// server, which takes no fault (fault.Check says so before anything is loaded).
func (s *Server) FaultCluster() fault.Cluster {
	if s.Cluster != nil && s.Cluster.Kind == discovery.PostgresHA {
		return s.Cluster.PatroniFaults()
	}
	if s.Cluster != nil {
		return s.Cluster.Faults()
	}
	return nil
}
