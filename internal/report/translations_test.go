package report

import (
	"strings"
	"testing"

	"github.com/fairbench/fairbench/internal/result"
)

// A setting a release renamed or dropped shows in the parity audit, per column, with what the
// release got instead; a release that took the profile as written has no row.
func TestParityShowsTranslations(t *testing.T) {
	checksums := result.Translation{Setting: "data_checksums", As: "initdb --no-data-checksums", Why: "18's initdb turns checksums on"}
	redo := result.Translation{Setting: "innodb_redo_log_capacity", As: "innodb_log_file_size=1073741824", Why: "MariaDB has no innodb_redo_log_capacity"}
	at := func(kind, version string, tps float64, tr ...result.Translation) *result.Result {
		r := run(kind, "oltp_read_write", 8, tps, true)
		r.Engine.Version = version
		if r.Server == nil {
			r.Server = &result.Server{}
		}
		r.Server.Translations = tr
		return r
	}
	for _, c := range []struct {
		name    string
		results []*result.Result
		want    []string
		notWant []string
	}{
		{"upgrade study", []*result.Result{at("postgres", "15.18", 1000), at("postgres", "18.6", 1100, checksums), at("mariadb", "11.8.9", 900, redo)},
			[]string{"Settings each release took in another form",
				"| postgres@18 | data_checksums | initdb --no-data-checksums | 18's initdb turns checksums on |",
				"| mariadb@11.8 | innodb_redo_log_capacity | innodb_log_file_size=1073741824 |"},
			[]string{"| postgres@15 | data_checksums"}},
		{"nothing translated", []*result.Result{at("postgres", "15.18", 1000), at("mysql", "9.7.4", 900)},
			nil, []string{"Settings each release took in another form"}},
	} {
		md, err := Markdown(&Input{Results: c.results})
		if err != nil {
			t.Fatal(err)
		}
		text := string(md)
		for _, w := range c.want {
			if !strings.Contains(text, w) {
				t.Errorf("%s: report lacks %q", c.name, w)
			}
		}
		for _, w := range c.notWant {
			if strings.Contains(text, w) {
				t.Errorf("%s: report has %q", c.name, w)
			}
		}
	}
}
