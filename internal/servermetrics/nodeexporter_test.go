package servermetrics

import (
	"strings"
	"testing"
	"time"
)

const nodeText = `# HELP node_cpu_seconds_total Seconds the CPUs spent in each mode.
# TYPE node_cpu_seconds_total counter
node_cpu_seconds_total{cpu="0",mode="idle"} 100
node_cpu_seconds_total{cpu="0",mode="user"} 10
node_cpu_seconds_total{cpu="0",mode="system"} 4
node_cpu_seconds_total{cpu="1",mode="user"} 6
node_cpu_seconds_total{cpu="1",mode="softirq"} 1
# TYPE node_memory_MemTotal_bytes gauge
node_memory_MemTotal_bytes 1e+09
# TYPE node_memory_MemAvailable_bytes gauge
node_memory_MemAvailable_bytes 6e+08
# TYPE node_memory_AnonPages_bytes gauge
node_memory_AnonPages_bytes 1e+08
# TYPE node_memory_Cached_bytes gauge
node_memory_Cached_bytes 2e+08
# TYPE node_disk_written_bytes_total counter
node_disk_written_bytes_total{device="vda"} 4096
node_disk_written_bytes_total{device="vdb"} 8192
# TYPE node_disk_writes_completed_total counter
node_disk_writes_completed_total{device="vda"} 1
node_disk_writes_completed_total{device="vdb"} 2
`

func TestParseNodeExporter(t *testing.T) {
	r, err := ParseNodeExporter(strings.NewReader(nodeText), time.Unix(0, 0))
	if err != nil {
		t.Fatal(err)
	}
	if r.CPUs != 2 || r.CPUUserS != 16 || r.CPUSystemS != 5 {
		t.Errorf("cpu: %+v", r)
	}
	if r.MemUsed != 4e8 || r.MemAnon != 1e8 || r.MemCache != 2e8 {
		t.Errorf("memory: %+v", r)
	}
	if r.Disk.WriteBytes != 12288 || r.Disk.WriteOps != 3 || strings.Join(r.Devices, ",") != "vda,vdb" {
		t.Errorf("disk: %+v", r)
	}
	if _, err := ParseNodeExporter(strings.NewReader("node_cpu_seconds_total{cpu=\"0\" 1\n"), time.Now()); err == nil {
		t.Error("malformed text parsed without error")
	}
}

func FuzzParseNodeExporter(f *testing.F) {
	f.Add(nodeText)
	f.Fuzz(func(t *testing.T, s string) { _, _ = ParseNodeExporter(strings.NewReader(s), time.Now()) })
}
