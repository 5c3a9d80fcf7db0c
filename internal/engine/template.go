package engine

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"os"
	"os/exec"
	"slices"
	"sync"

	"github.com/fairbench/fairbench/internal/engine/discovery"
	"github.com/fairbench/fairbench/internal/engine/profile"
)

// A MySQL 9.7 server took 3.7 s to be ready here from an empty directory and 1.9 s from a copy
// of an initialized one (mysqld --initialize builds its data dictionary), and a study starts
// dozens of them: the shoot-out's knob table alone
// starts one per configuration and round. The data directory a fresh initialization makes is
// the same for every server of an installation (initialization reads no setting of the
// fairness profile), so the first server of an installation in this process initializes a
// template, and the others copy it and give it their own password at their first start
// (--init-file, read before the server takes a connection). The template has a password of its
// own that is never used to log in, and lives in a run directory with an owner record like a
// server's, so that a fairbench killed before removing it has it reaped like its servers.

// dataTemplate is one installation's initialized data directory.
type dataTemplate struct {
	mu      sync.Mutex
	srv     *Server // its run dir, record and removal: a Server that never starts
	err     error   // why it could not be made: the servers initialize their own
	dropped bool    // removed by DropTemplates: a server still holding it initializes its own
}

var templates = struct {
	sync.Mutex
	byInst map[string]*dataTemplate
}{byInst: map[string]*dataTemplate{}}

// fromTemplate fills s's data directory from its installation's template, making the template
// first if it is the installation's first server; false (and nothing done) where no template
// applies or one could not be made, and s initializes its own.
func (s *Server) fromTemplate(ctx context.Context) (bool, error) {
	if s.Kind == discovery.Postgres || s.galera != nil {
		return false, nil
	}
	t := templateOf(s.inst)
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.err != nil || t.dropped {
		return false, nil
	}
	// Made again if it was removed since (StopAll, or by hand).
	if t.srv == nil || t.srv.isStopped() || !discovery.IsDir(t.srv.host("data")) {
		if t.srv != nil {
			_ = t.srv.Stop()
		}
		if t.srv, t.err = makeTemplate(ctx, s.inst, s.prof); t.err != nil {
			return false, nil
		}
	}
	// cp keeps the files' modes and sparseness, and shares blocks where the filesystem can.
	out, err := exec.CommandContext(ctx, "cp", "-a", "--reflink=auto", t.srv.host("data"), s.host("data")).CombinedOutput()
	if err != nil {
		_ = os.RemoveAll(s.host("data"))
		return false, fmt.Errorf("copy the template data directory: %v: %s", err, out)
	}
	s.rekey = s.host("accounts.sql")
	if err := writePrivate(s.rekey, mysqlAccountsSQL(s.Kind, s.password)); err != nil {
		return true, err
	}
	return true, s.giveToServerUser(s.rekey)
}

func templateOf(inst discovery.Installation) *dataTemplate {
	key := inst.Kind + "\x00" + inst.Binary + "\x00" + inst.Root
	templates.Lock()
	defer templates.Unlock()
	t := templates.byInst[key]
	if t == nil {
		t = &dataTemplate{}
		templates.byInst[key] = t
	}
	return t
}

// makeTemplate initializes a data directory in a run directory of its own, as a server's, in the
// system's temporary directory: not in the servers' work dir, which may be a small device made
// for a study (the bandwidth study's) or a directory its caller removes. Where the template lies
// does not matter to a measurement: each server's data is a copy in its own work dir.
func makeTemplate(ctx context.Context, inst discovery.Installation, prof profile.Profile) (*Server, error) {
	t := &Server{Kind: inst.Kind, Version: inst.Version, inst: inst, prof: prof, password: newPassword(), template: true}
	err := t.makeRunDir("")
	if err == nil {
		err = t.writeRecord()
	}
	if err == nil {
		err = t.initMySQL(ctx)
	}
	if err != nil {
		_ = t.Stop()
		return nil, err
	}
	return t, nil
}

// DropTemplates removes every template this process made; StopAll calls it, and so does the
// command line before it exits. A server started after it makes a new one.
func DropTemplates() error {
	templates.Lock()
	list := slices.Collect(maps.Values(templates.byInst))
	clear(templates.byInst)
	templates.Unlock()
	var errs []error
	for _, t := range list {
		t.mu.Lock()
		if t.srv != nil {
			errs = append(errs, t.srv.Stop())
		}
		t.srv, t.dropped = nil, true
		t.mu.Unlock()
	}
	return errors.Join(errs...)
}

func (s *Server) isStopped() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.stopped
}

// rekeyed removes the SQL that gave a template's copy its password, once the server logged in
// with it: a restart must not run it again, and it holds the password.
func (s *Server) rekeyed() {
	if s.rekey != "" {
		_ = os.Remove(s.rekey)
		s.rekey = ""
	}
}
