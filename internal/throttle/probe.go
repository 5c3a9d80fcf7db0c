package throttle

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"time"
)

// ProbeResult is what a direct-I/O write and read of one file on the device achieved from
// inside the group, measured at the device (its own transfer counters) over wall-clock time.
type ProbeResult struct {
	Bytes        int64   `json:"bytes"`
	WriteSeconds float64 `json:"write_s"`
	ReadSeconds  float64 `json:"read_s"`
	WriteBps     float64 `json:"write_bps"` // bytes the device wrote per second
	ReadBps      float64 `json:"read_bps"`
}

// Probe writes size bytes (whole MiB, at least one) to a file on the device with O_DIRECT from
// inside the group, reads them back the same way and removes the file. O_DIRECT keeps the page
// cache out of it, so what is timed is the device under the group's cap: the proof that the cap
// holds before a server is measured behind it.
//
// The rate is the device's steady state: the first half second is left out when the transfer
// runs long enough, because a throttle that has been idle lets a short burst through at once,
// which would otherwise read as a cap exceeded.
func Probe(ctx context.Context, g *Group, d *Device, size int64) (ProbeResult, error) {
	mib := max(size>>20, 1)
	path := filepath.Join(d.Dir, probeName)
	defer os.Remove(path)
	res := ProbeResult{Bytes: mib << 20}
	count := "count=" + strconv.FormatInt(mib, 10)
	var err error
	if res.WriteSeconds, res.WriteBps, err = probeRun(ctx, g, d, false,
		"if=/dev/zero", "of="+path, "bs=1M", count, "oflag=direct", "conv=fsync", "status=none"); err != nil {
		return res, err
	}
	if res.ReadSeconds, res.ReadBps, err = probeRun(ctx, g, d, true,
		"if="+path, "of=/dev/null", "bs=1M", "iflag=direct", "status=none"); err != nil {
		return res, err
	}
	return res, nil
}

// probeSkip is the start of a transfer left out of its rate, and probeMinSpan how long what is
// left must last for the skip to apply.
const (
	probeSkip    = 500 * time.Millisecond
	probeMinSpan = time.Second
)

func probeRun(ctx context.Context, g *Group, d *Device, read bool, args ...string) (secs, bps float64, err error) {
	first, err := d.Stats()
	if err != nil {
		return 0, 0, err
	}
	cmd := g.Command(ctx, "dd", args...)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	start := time.Now()
	if err := cmd.Start(); err != nil {
		return 0, 0, err
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	base, skipped := first, false
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	var runErr error
wait:
	for {
		select {
		case runErr = <-done:
			break wait
		case <-tick.C:
			if !skipped && time.Since(start) >= probeSkip {
				if s, err := d.Stats(); err == nil {
					base, skipped = s, true
				}
			}
		}
	}
	secs = time.Since(start).Seconds()
	if runErr != nil {
		return 0, 0, fmt.Errorf("dd %v: %v: %s", args, runErr, lastLine(out.Bytes()))
	}
	last, err := d.Stats()
	if err != nil {
		return 0, 0, err
	}
	if last.At.Sub(base.At) < probeMinSpan {
		base = first // too short to leave anything out
	}
	moved := last.WriteBytes - base.WriteBytes
	if read {
		moved = last.ReadBytes - base.ReadBytes
	}
	return secs, float64(moved) / last.At.Sub(base.At).Seconds(), nil
}
