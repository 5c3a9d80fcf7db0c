// Package deploy holds what orchestrators need to run fairbench on several client hosts; its
// test checks the manifests' wiring, since no Kubernetes cluster is reachable from CI.
package deploy

import (
	"bytes"
	"errors"
	"io"
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"

	"github.com/fairbench/fairbench/internal/cli"
	"github.com/fairbench/fairbench/internal/runspec"
)

type container struct {
	Image string   `yaml:"image"`
	Args  []string `yaml:"args"`
	Env   []struct {
		Name      string `yaml:"name"`
		ValueFrom *struct {
			SecretKeyRef *struct{ Name, Key string } `yaml:"secretKeyRef"`
		} `yaml:"valueFrom"`
	} `yaml:"env"`
	VolumeMounts []struct{ Name, MountPath string } `yaml:"volumeMounts"`
}

type doc struct {
	Kind string `yaml:"kind"`
	Spec struct {
		CompletionMode string `yaml:"completionMode"`
		Completions    int    `yaml:"completions"`
		Parallelism    int    `yaml:"parallelism"`
		Template       struct {
			Spec struct {
				Containers []container `yaml:"containers"`
				Volumes    []struct {
					PersistentVolumeClaim struct {
						ClaimName string `yaml:"claimName"`
					} `yaml:"persistentVolumeClaim"`
				} `yaml:"volumes"`
			} `yaml:"spec"`
		} `yaml:"template"`
	} `yaml:"spec"`
}

func load(t *testing.T, path string) []doc {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	dec := yaml.NewDecoder(bytes.NewReader(data))
	var docs []doc
	for {
		var d doc
		err := dec.Decode(&d)
		if errors.Is(err, io.EOF) {
			return docs
		}
		if err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		docs = append(docs, d)
	}
}

func job(t *testing.T, docs []doc) doc {
	t.Helper()
	for _, d := range docs {
		if d.Kind == "Job" {
			return d
		}
	}
	t.Fatal("no Job")
	return doc{}
}

// The Indexed Job's pods are the shards: as many completions as shards, all running at once,
// each told its index through --shard k8s/N, writing its own file on the shared volume, with
// the password from a Secret and never in the arguments.
func TestShardsJob(t *testing.T) {
	j := job(t, load(t, "kubernetes/shards-job.yaml"))
	s := j.Spec
	if s.CompletionMode != "Indexed" || s.Completions < 2 || s.Parallelism != s.Completions {
		t.Fatalf("completionMode %q, completions %d, parallelism %d: want Indexed with all pods at once", s.CompletionMode, s.Completions, s.Parallelism)
	}
	c := s.Template.Spec.Containers[0]
	want := []string{"run", "--shard=k8s/" + itoa(s.Completions), "--out=/results/shard-$(JOB_COMPLETION_INDEX).json"}
	for _, w := range want {
		if !slices.Contains(c.Args, w) {
			t.Errorf("args lack %q: %v", w, c.Args)
		}
	}
	if !slices.ContainsFunc(c.Args, func(a string) bool { return strings.HasPrefix(a, "--start-at=") }) {
		t.Error("no --start-at: the shards would not measure the same window")
	}
	for _, a := range c.Args {
		if regexp.MustCompile(`://[^/@]*:[^/@]*@`).MatchString(a) {
			t.Errorf("a password in the arguments: %s", a)
		}
	}
	if len(c.Env) == 0 || c.Env[0].Name != "FAIRBENCH_PASSWORD" || c.Env[0].ValueFrom == nil || c.Env[0].ValueFrom.SecretKeyRef == nil {
		t.Error("FAIRBENCH_PASSWORD must come from a Secret")
	}
	// Pod k (completion index k, from 0) is shard k+1 of N: every shard once.
	i := slices.IndexFunc(c.Args, func(a string) bool { return strings.HasPrefix(a, "--shard=") })
	if i < 0 {
		t.Fatal("no --shard")
	}
	shardArg := strings.TrimPrefix(c.Args[i], "--shard=")
	for k := range s.Completions {
		t.Setenv(runspec.IndexedJobEnv, itoa(k))
		sh, err := runspec.ParseShard("--shard", shardArg)
		if err != nil || sh.Index != k+1 || sh.Count != s.Completions {
			t.Errorf("pod %d: --shard=%s reads as %+v (%v), want shard %d of %d", k, shardArg, sh, err, k+1, s.Completions)
		}
	}
	// Every flag is one the run command knows (--help stops before connecting).
	args := append(slices.Clone(c.Args), "--help")
	if code := cli.Main(args, io.Discard, io.Discard); code != 0 {
		t.Errorf("fairbench %s: exit %d", strings.Join(c.Args, " "), code)
	}
}

func TestMergeJobReadsTheShardsVolume(t *testing.T) {
	shards := job(t, load(t, "kubernetes/shards-job.yaml"))
	merge := job(t, load(t, "kubernetes/merge-job.yaml"))
	claim := func(d doc) string { return d.Spec.Template.Spec.Volumes[0].PersistentVolumeClaim.ClaimName }
	if claim(shards) != claim(merge) {
		t.Errorf("merge reads claim %q, shards write %q", claim(merge), claim(shards))
	}
	if args := merge.Spec.Template.Spec.Containers[0].Args; len(args) < 4 || args[0] != "merge" || args[len(args)-1] != "/results" {
		t.Errorf("merge args %v: want merge --out FILE /results", args)
	}
}

func itoa(n int) string { return strconv.Itoa(n) }
