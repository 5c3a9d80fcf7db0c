package compare

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/fairbench/fairbench/internal/engine/discovery"
	"github.com/fairbench/fairbench/internal/engine/profile"
	"github.com/fairbench/fairbench/internal/result"
	"github.com/fairbench/fairbench/internal/testserver"
)

// compare --profile defaults --explain binlog on real MySQL-family servers: each engine runs as
// its package ships it (MySQL's binary log on, MariaDB's off), then again with the binary log
// flipped; every result records its profile, the flipped knob and the same loaded data, and
// the report's parity section lists the binary log among the differences.
func TestCompareDefaultsAndExplain(t *testing.T) {
	testserver.Integration(t)
	var kinds []string
	for _, k := range []string{discovery.MySQL, discovery.MariaDB} {
		if _, err := discovery.Find(k, ""); err == nil || strings.Contains(os.Getenv("FAIRBENCH_REQUIRE_ENGINES"), k) {
			kinds = append(kinds, k)
		}
	}
	if len(kinds) < 2 {
		t.Skip("needs MySQL and MariaDB")
	}
	o := options(t, kinds)
	o.Profile = profile.Profile{Mode: profile.ModeDefaults}
	o.Explain = []string{"binlog"}
	o.Suite.Steps = o.Suite.Steps[:1] // oltp_read_write: the binary log has writes to log
	results := runClean(t, o)
	if len(results) != 4 {
		t.Fatalf("%d results, want 4 (2 engines, each as compared and with binlog flipped)", len(results))
	}
	wantBinlog := map[string]string{"mysql": "ON", "mariadb": "OFF"}
	var datasets []*result.Dataset
	for _, r := range results {
		if r.Profile != "defaults" || r.Dataset == nil || !r.Dataset.Checksummed || r.Server == nil {
			t.Fatalf("%s: profile %q, dataset %+v", r.Engine.Kind, r.Profile, r.Dataset)
		}
		datasets = append(datasets, r.Dataset)
		want := wantBinlog[r.Engine.Kind]
		if len(r.Flipped) > 0 {
			want = map[string]string{"ON": "OFF", "OFF": "ON"}[want]
			if !reflect.DeepEqual(r.Flipped, []string{"binlog"}) {
				t.Errorf("%s: flipped %v", r.Engine.Kind, r.Flipped)
			}
		}
		if got := r.Server.Settings["log_bin"]; got != want {
			t.Errorf("%s flipped=%v: server reports log_bin=%s, want %s", r.Engine.Kind, r.Flipped, got, want)
		}
	}
	for _, ds := range datasets[1:] {
		if !reflect.DeepEqual(ds.Tables, datasets[0].Tables) || !reflect.DeepEqual(ds.Indexes, datasets[0].Indexes) {
			t.Errorf("the engines loaded different data: %+v vs %+v", ds, datasets[0])
		}
	}
	md, err := os.ReadFile(filepath.Join(o.OutDir, "report.md"))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"binary log: on, sync_binlog=1 on mysql; off on mariadb", "Profile: defaults", "## Knob effects (--explain)", "| binlog | mysql | log_bin (default) → OFF |"} {
		if !strings.Contains(string(md), want) {
			t.Errorf("report.md lacks %q", want)
		}
	}
}
