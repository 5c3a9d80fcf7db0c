// Package throttle gives a server a storage device of its own whose bandwidth can be capped: a
// loop device over a sparse file, formatted ext4 and mounted (Device), and a cgroup that holds
// the server's processes under a read and write cap on that device (Group). Both need root.
//
// Everything set up is torn down by Close, also after a failure half-way through the set-up:
// no loop device, mount, cgroup or throttle rule outlives the run. Leftovers reports whatever
// is still there, for tests and for a last check.
package throttle

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"

	"github.com/fairbench/fairbench/internal/runspec"
)

// ErrNotRoot is returned by everything that needs root when the process is not root.
var ErrNotRoot = errors.New("needs root: it attaches a loop device, mounts a filesystem and writes cgroup I/O limits; run it as root")

// RequireRoot fails with ErrNotRoot unless the process runs as root.
func RequireRoot() error {
	if os.Geteuid() != 0 {
		return ErrNotRoot
	}
	return nil
}

// errInjected is the failure a test injects at a set-up step (DeviceOptions.failAt).
var errInjected = errors.New("injected failure")

// inject fails step when the test that built this device or group asked for it.
func inject(failAt, step string) error {
	if failAt == step {
		return fmt.Errorf("%s: %w", step, errInjected)
	}
	return nil
}

// ParseRate reads a bandwidth like 25M, 125M, 1G, 500K, 100MB/s or a plain number of bytes per
// second; "max" (or "unlimited") is 0, no cap. The size is runspec's (binary units, M = MiB, as in
// cgroup tooling).
func ParseRate(s string) (int64, error) {
	v := strings.TrimSpace(s)
	switch strings.ToUpper(v) {
	case "MAX", "UNLIMITED":
		return 0, nil
	}
	n, err := runspec.ParseSize("bandwidth", strings.TrimSuffix(strings.TrimSuffix(v, "/s"), "/S"))
	if err != nil {
		return 0, fmt.Errorf("bandwidth %q: use e.g. 25M, 125M, 1G or max", s)
	}
	// Below a few pages per second the throttle would stall every single I/O for seconds.
	if n < 64<<10 {
		return 0, fmt.Errorf("bandwidth %q is below 64K per second", s)
	}
	return n, nil
}

// FormatRate writes a cap as ParseRate reads it (0 is "max").
func FormatRate(bps int64) string {
	switch {
	case bps <= 0:
		return "max"
	case bps%(1<<30) == 0:
		return strconv.FormatInt(bps>>30, 10) + "G"
	case bps%(1<<20) == 0:
		return strconv.FormatInt(bps>>20, 10) + "M"
	case bps%(1<<10) == 0:
		return strconv.FormatInt(bps>>10, 10) + "K"
	}
	return strconv.FormatInt(bps, 10)
}

// Throttled is a device and the group that caps it: what a server behind a bandwidth cap needs.
type Throttled struct {
	Device *Device
	Group  *Group
}

// Setup builds the device and its group (no cap yet). On failure nothing is left behind.
func Setup(ctx context.Context, opts DeviceOptions) (*Throttled, error) {
	d, err := NewDevice(ctx, opts)
	if err != nil {
		return nil, err
	}
	g, err := newGroup(d.Major, d.Minor, opts.failAt)
	if err != nil {
		if cerr := d.Close(); cerr != nil {
			err = fmt.Errorf("%w (and tearing down: %v)", err, cerr)
		}
		return nil, err
	}
	return &Throttled{Device: d, Group: g}, nil
}

// Close lifts the cap before unmounting, so that the filesystem's last writeback is not held to
// it, and tears everything down; it is safe to call more than once.
func (t *Throttled) Close() error {
	return errors.Join(t.Group.Close(), t.Device.Close())
}

// Leftovers lists what is still on the machine; empty after Close.
func (t *Throttled) Leftovers() []string {
	return append(t.Group.Leftovers(), t.Device.Leftovers()...)
}
