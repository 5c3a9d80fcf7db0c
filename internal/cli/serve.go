package cli

import (
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/fairbench/fairbench/internal/engine"
	"github.com/fairbench/fairbench/internal/engine/discovery"
	"github.com/fairbench/fairbench/internal/engine/profile"
	"github.com/fairbench/fairbench/internal/runspec"
	"github.com/fairbench/fairbench/internal/throttle"
)

// serve starts one throwaway server (on a loop device of its own with --device), prints its DSN
// and keeps it until Ctrl-C; a server that dies meanwhile ends serve with exit status 1 and says
// so, instead of leaving a user to find out from refused connections.
func serve(cmd *cobra.Command, inst discovery.Installation, prof profile.Profile, workDir, device string, noJournal bool) error {
	stderr := cmd.ErrOrStderr()
	if device != "" {
		size, err := parseDevice(device)
		if err != nil {
			return err
		}
		if _, err := throttle.ReapStale(workDir); err != nil {
			fmt.Fprintf(stderr, "fairbench: reaping loop devices left by a killed fairbench: %v\n", err)
		}
		dev, err := throttle.NewDevice(cmd.Context(), throttle.DeviceOptions{WorkDir: workDir, SizeBytes: size, NoJournal: noJournal})
		if err != nil {
			return err
		}
		defer dev.Close() // after the server's Stop below
		workDir = dev.Dir
		journal := "ext4"
		if noJournal {
			journal = "ext4 without a journal"
		}
		fmt.Fprintf(stderr, "data directory on %s (%s), a loop device of its own, %s (counters: /sys/block/%s/stat)\n",
			dev.Path, dev.DevNum(), journal, strings.TrimPrefix(dev.Path, "/dev/"))
	}
	srv, err := engine.Start(cmd.Context(), inst, prof, workDir)
	if err != nil {
		return err
	}
	defer srv.Stop()
	// The password stays off the terminal: the DSN names a root-only file that holds it, which
	// fairbench run --target (and password_file= anywhere fairbench takes a DSN) reads.
	dsn, err := srv.DSNWithPasswordFile()
	if err != nil {
		return err
	}
	fmt.Fprintln(cmd.OutOrStdout(), dsn)
	fmt.Fprintf(stderr, "%s %s (%s) running (pid tree %v); Ctrl-C stops it and removes %s\n", inst.Name(), inst.Version, inst.Origin, srv.PIDs(), srv.DataDir)
	select {
	case <-cmd.Context().Done():
		return nil
	case <-srv.Exited():
		fmt.Fprintf(stderr, "the server's log ends:\n%s", srv.Logs())
		return fmt.Errorf("the %s server is no longer running: it exited (%v) while serving", inst.Kind, srv.ExitError())
	}
}

// minDevice is the smallest --device that holds a server, its WAL/redo and a small data set.
const minDevice = 256 << 20

// parseDevice reads --device (serve, compare): "" is none (0); a size needs root, since a loop
// device is attached and mounted.
func parseDevice(device string) (int64, error) {
	if device == "" {
		return 0, nil
	}
	size, err := runspec.ParseSize("--device", device)
	if err != nil {
		return 0, badInput(err)
	}
	if size < minDevice {
		return 0, badInputf("--device %q: use a size like 8G, at least 256M", device)
	}
	if err := throttle.RequireRoot(); err != nil {
		return 0, badInputf("--device: %v", err)
	}
	return size, nil
}
