package servermetrics

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/fairbench/fairbench/internal/result"
	"github.com/fairbench/fairbench/internal/sqldb"
	"github.com/fairbench/fairbench/internal/testserver"
	"github.com/fairbench/fairbench/internal/throttle"
)

// The device's figures replace a cgroup's, which stay beside them as the secondary source; per
// interval the device's change since the last reading.
func TestDeviceWatch(t *testing.T) {
	readings := []throttle.IOStats{
		{ReadBytes: 1000, WriteBytes: 5000, ReadOps: 1, WriteOps: 2},
		{ReadBytes: 1500, WriteBytes: 9000, ReadOps: 2, WriteOps: 6},
		{ReadBytes: 2000, WriteBytes: 20000, ReadOps: 4, WriteOps: 9},
	}
	cases := []struct {
		name      string
		before    result.Server
		wantGroup *result.DiskIO
	}{
		{"a cgroup's figures move beside the device's",
			result.Server{DiskWriteBytes: 7000, DiskWriteOps: 5, DiskReadBytes: 100, DiskReadOps: 1, DiskSource: "cgroup v1 /sys/fs/cgroup/blkio/x (a lower bound: ...)"},
			&result.DiskIO{WriteBytes: 7000, WriteOps: 5, ReadBytes: 100, ReadOps: 1, Source: "cgroup v1 /sys/fs/cgroup/blkio/x (a lower bound: ...)"}},
		{"no cgroup: the device alone", result.Server{}, nil},
		{"the /proc fallback is not a secondary source", result.Server{DiskWriteBytes: 1, DiskSource: DiskSourceProcIO}, nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			i := 0
			w := &deviceWatch{name: "loop9", read: func(name string) (throttle.IOStats, error) {
				if name != "loop9" || i >= len(readings) {
					return throttle.IOStats{}, errors.New("unexpected read")
				}
				i++
				return readings[i-1], nil
			}}
			if err := w.start(); err != nil {
				t.Fatal(err)
			}
			var iv result.Interval
			if err := w.interval(&iv); err != nil {
				t.Fatal(err)
			}
			if iv.ServerDiskWriteBytes != 4000 || iv.ServerDiskWriteOps != 4 || iv.ServerDiskReadBytes != 500 || iv.ServerDiskReadOps != 1 {
				t.Errorf("interval %+v", iv)
			}
			srv := c.before
			if err := w.finish(&srv); err != nil {
				t.Fatal(err)
			}
			if srv.DiskWriteBytes != 15000 || srv.DiskWriteOps != 7 || srv.DiskReadBytes != 1000 || srv.DiskReadOps != 3 {
				t.Errorf("totals %+v", srv)
			}
			if !strings.HasPrefix(srv.DiskSource, "block device loop9, this server's alone") || !strings.HasSuffix(srv.DiskDevice, "loop9") {
				t.Errorf("source %q, device %q", srv.DiskSource, srv.DiskDevice)
			}
			if (srv.DiskCgroup == nil) != (c.wantGroup == nil) || (c.wantGroup != nil && *srv.DiskCgroup != *c.wantGroup) {
				t.Errorf("disk_cgroup %+v, want %+v", srv.DiskCgroup, c.wantGroup)
			}
		})
	}
}

// A server on a block device of its own: the monitor takes the disk figures from the device's
// counters, says so, keeps the cgroup's beside them, and its bytes written are the device's
// change over the run within 5% (read by the test around the monitor's window, so the test's
// window holds the monitor's).
func TestIntegrationMonitorOwnDevice(t *testing.T) {
	for _, kind := range testserver.Kinds() {
		t.Run(kind, func(t *testing.T) {
			ctx := context.Background()
			srv, dev := testserver.OnDevice(t, kind)
			name, ok := throttle.OwnDevice(srv.DataDir)
			if !ok || "/dev/"+name != dev.Path {
				t.Fatalf("OwnDevice(%s) = %q, %v; want %s", srv.DataDir, name, ok, dev.Path)
			}
			tg, err := sqldb.ParseTarget(srv.DSN)
			if err != nil {
				t.Fatal(err)
			}
			c, err := sqldb.Open(ctx, tg)
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			g, _ := srv.Cgroup()
			before, err := dev.Stats()
			if err != nil {
				t.Fatal(err)
			}
			m := NewMonitor(c, srv.PIDs).WithCgroup(g, srv.DataDisk()).WithDataDir(srv.DataDir)
			if err := m.Start(ctx); err != nil {
				t.Fatal(err)
			}
			writeRows(t, c)
			var iv result.Interval
			m.OnInterval(&iv)
			res, err := m.Finish(ctx, 1)
			if err != nil {
				t.Fatal(err)
			}
			after, err := dev.Stats()
			if err != nil {
				t.Fatal(err)
			}
			devBytes := after.WriteBytes - before.WriteBytes
			t.Logf("device %s wrote %d bytes in %d bios; monitor: %d bytes, %d ops, source %q; cgroup %+v",
				name, devBytes, after.WriteOps-before.WriteOps, res.DiskWriteBytes, res.DiskWriteOps, res.DiskSource, res.DiskCgroup)
			if !strings.HasPrefix(res.DiskSource, "block device "+name+", this server's alone") {
				t.Errorf("disk_source = %q, want the device", res.DiskSource)
			}
			if devBytes < 1<<20 || res.DiskWriteBytes < devBytes*95/100 || res.DiskWriteBytes > devBytes {
				t.Errorf("monitor counted %d bytes written, the device %d: not within 5%%", res.DiskWriteBytes, devBytes)
			}
			if res.DiskWriteOps <= 0 || iv.ServerDiskWriteBytes <= 0 {
				t.Errorf("no operations or interval figures: %+v, interval %+v", res, iv)
			}
			if g != nil && (res.DiskCgroup == nil || !strings.HasPrefix(res.DiskCgroup.Source, "cgroup v") ||
				res.DiskCgroup.WriteBytes <= 0 || res.DiskCgroup.WriteBytes > res.DiskWriteBytes*11/10) {
				t.Errorf("the cgroup's figures beside the device's: %+v", res.DiskCgroup)
			}
		})
	}
}

// writeRows commits rows one small transaction at a time, each made durable by the server's
// fsync: the writes a cgroup undercounts on a journaled filesystem.
func writeRows(t *testing.T, c sqldb.Conn) {
	t.Helper()
	ctx := context.Background()
	if err := c.Exec(ctx, "CREATE TABLE fb_device_test (id INT PRIMARY KEY, pad VARCHAR(200) NOT NULL)"); err != nil {
		t.Fatal(err)
	}
	pad := strings.Repeat("x", 200)
	for i := range 1000 {
		if err := c.Exec(ctx, "INSERT INTO fb_device_test (id, pad) VALUES ("+itoa(int64(i))+", '"+pad+"')"); err != nil {
			t.Fatal(err)
		}
	}
}
