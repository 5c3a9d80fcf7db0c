package engine

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fairbench/fairbench/internal/throttle"
)

// A loop device a killed fairbench left in the temporary directory is torn down when the next
// fairbench starts a server, whether or not that run makes a device of its own; one whose owner
// still runs is not touched.
func TestStartReapsDevicesLeftByAKilledRun(t *testing.T) {
	integration(t) // makes loop devices
	if err := throttle.RequireRoot(); err != nil {
		t.Skip(err)
	}
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp) // os.TempDir(), where devices are made by default
	ctx := context.Background()
	left, err := throttle.NewDevice(ctx, throttle.DeviceOptions{WorkDir: tmp, SizeBytes: 64 << 20})
	if err != nil {
		t.Skipf("no loop device here: %v", err)
	}
	defer left.Close()
	live, err := throttle.NewDevice(ctx, throttle.DeviceOptions{WorkDir: tmp, SizeBytes: 64 << 20})
	if err != nil {
		t.Fatal(err)
	}
	defer live.Close()
	// Its owner is gone: PID 1 never started at tick 0.
	leftBase := filepath.Dir(left.Dir)
	if err := os.WriteFile(filepath.Join(leftBase, "owner"), []byte("1 0\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	var log strings.Builder
	reapDevicesAtStart(&log)
	if _, err := os.Stat(leftBase); !os.IsNotExist(err) {
		t.Errorf("the dead run's device %s is still there (%v); log: %s", leftBase, err, log.String())
	}
	if !strings.Contains(log.String(), "removed the loop device "+leftBase) {
		t.Errorf("log %q does not name the device removed", log.String())
	}
	if _, err := os.Stat(live.Dir); err != nil {
		t.Errorf("the live device was touched: %v", err)
	}
}
