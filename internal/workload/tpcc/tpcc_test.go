package tpcc

import (
	"math"
	"regexp"
	"strings"
	"testing"

	"github.com/fairbench/fairbench/internal/dialect"
	"github.com/fairbench/fairbench/internal/randgen"
	"github.com/fairbench/fairbench/internal/result"
	"github.com/fairbench/fairbench/internal/sqldb"
	"github.com/fairbench/fairbench/internal/workload"
)

func newGen(seed uint64) gen {
	cfg := randgen.DefaultConfig("uniform")
	if err := cfg.Init(); err != nil {
		panic(err)
	}
	return gen{cfg.New(seed)}
}

func TestDecimals(t *testing.T) {
	for _, tc := range []struct {
		v     int64
		scale int
		text  string
	}{
		{-1000, 2, "-10.00"}, {1000, 2, "10.00"}, {5, 2, "0.05"}, {30000000, 2, "300000.00"},
		{450, 4, "0.0450"}, {2000, 4, "0.2000"}, {0, 2, "0.00"}, {7, 0, "7"},
	} {
		if got := string(appendDec(nil, tc.v, tc.scale)); got != tc.text {
			t.Errorf("appendDec(%d, %d) = %q, want %q", tc.v, tc.scale, got, tc.text)
		}
	}
	for _, tc := range []struct {
		text  string
		cents int64
	}{
		{"-10.00", -1000}, {"12.34", 1234}, {"7.5", 750}, {"3", 300}, {"0.05", 5}, {"99.999", 9999}, {"", 0}, {"+1.10", 110},
	} {
		if got := parseCents(tc.text); got != tc.cents {
			t.Errorf("parseCents(%q) = %d, want %d", tc.text, got, tc.cents)
		}
	}
}

func TestLastNames(t *testing.T) {
	for _, tc := range []struct {
		n    int
		name string
	}{
		{0, "BARBARBAR"}, {1, "BARBAROUGHT"}, {371, "PRICALLYOUGHT"}, {999, "EINGEINGEING"}, {520, "ESEABLEBAR"},
	} {
		if got := string(lastName(nil, tc.n)); got != tc.name {
			t.Errorf("lastName(%d) = %q, want %q", tc.n, got, tc.name)
		}
	}
}

// The random inputs stay in the ranges of clause 2 and 4.3.2, and the run's C_LAST constant keeps
// the distance from the load's that clause 2.1.6.1 demands.
func TestRandomInputs(t *testing.T) {
	g := newGen(1)
	for _, tc := range []struct {
		a, x, y int
	}{{1023, 1, 3000}, {8191, 1, 100000}, {255, 0, 999}} {
		lo, hi := tc.y, tc.x
		for i := 0; i < 200000; i++ {
			v := g.nurand(tc.a, 123, tc.x, tc.y)
			lo, hi = min(lo, v), max(hi, v)
		}
		if span := tc.y - tc.x; lo < tc.x || hi > tc.y || lo > tc.x+span/100 || hi < tc.y-span/100 {
			t.Errorf("NURand(%d, %d, %d) drew %d..%d", tc.a, tc.x, tc.y, lo, hi)
		}
	}
	for seed := uint64(0); seed < 200; seed++ {
		rc := newRunConstants(newGen(seed))
		d := rc.cLast - cLoad
		if d < 0 {
			d = -d
		}
		if d < 65 || d > 119 || d == 96 || d == 112 || rc.cID < 0 || rc.cID > 1023 || rc.cItem < 0 || rc.cItem > 8191 {
			t.Fatalf("run constants %+v: C_LAST is %d away from the load's %d", rc, d, cLoad)
		}
	}
	originals := 0
	for i := 0; i < 20000; i++ {
		b := g.data(nil)
		if len(b) < 26 || len(b) > 50 {
			t.Fatalf("I_DATA of %d characters", len(b))
		}
		if strings.Contains(string(b), original) {
			originals++
		}
	}
	if originals < 1700 || originals > 2300 {
		t.Errorf("%d of 20000 data strings hold ORIGINAL, want about 10%%", originals)
	}
	if z := string(g.zip(nil)); len(z) != 9 || !strings.HasSuffix(z, "11111") {
		t.Errorf("zip %q", z)
	}
	for _, mean := range []float64{5, 12} {
		sum, n := 0.0, 100000
		for i := 0; i < n; i++ {
			v := g.exp(mean)
			if v < 0 || v > 10*mean {
				t.Fatalf("think time %.2f outside 0..10x the mean %.0f", v, mean)
			}
			sum += v
		}
		if avg := sum / float64(n); math.Abs(avg-mean) > 0.05*mean {
			t.Errorf("think times average %.2f, want %.0f", avg, mean)
		}
	}
}

// The mix and the inputs the worker draws: clause 5.2.3's percentages, 1% NewOrders with an
// unused last item, 1% remote order lines and 15% remote Payments with several warehouses,
// 60% of customers chosen by last name.
func TestDraw(t *testing.T) {
	for _, warehouses := range []int{1, 4} {
		tp := &tpcc{warehouses: warehouses}
		g := newGen(uint64(warehouses))
		w := &worker{t: tp, g: g, rc: newRunConstants(g), w: warehouses}
		const n = 200000
		var byKind [5]int
		var rollbacks, lines, remoteLines, remotePay, byName, named int
		for i := 0; i < n; i++ {
			w.draw()
			byKind[w.kind]++
			switch w.kind {
			case kindNewOrder:
				if len(w.ol) < 5 || len(w.ol) > 15 {
					t.Fatalf("%d order lines", len(w.ol))
				}
				for j, in := range w.ol {
					lines++
					if in.supplyW != w.w {
						remoteLines++
						if in.supplyW < 1 || in.supplyW > warehouses {
							t.Fatalf("supply warehouse %d of %d", in.supplyW, warehouses)
						}
					}
					if j > 0 && w.ol[j-1].item > in.item {
						t.Fatal("order lines not in item order")
					}
					if in.item == items+1 {
						if j != len(w.ol)-1 {
							t.Fatal("the unused item is not the last line")
						}
						rollbacks++
					}
				}
			case kindPayment:
				if w.cW != w.w {
					remotePay++
				}
				fallthrough
			case kindOrderStatus:
				named++
				if w.byName {
					byName++
					if len(w.cLast) < 9 {
						t.Fatalf("last name %q", w.cLast)
					}
				}
			}
		}
		share := func(k int) float64 { return float64(byKind[k]) / n * 100 }
		for k, want := range []float64{45, 43, 4, 4, 4} {
			if math.Abs(share(k)-want) > 0.6 {
				t.Errorf("%s is %.1f%% of the mix, want %.0f%%", kinds[k], share(k), want)
			}
		}
		pct := func(a, b int) float64 { return float64(a) / float64(b) * 100 }
		if p := pct(rollbacks, byKind[kindNewOrder]); p < 0.8 || p > 1.2 {
			t.Errorf("%.2f%% of NewOrders roll back, want 1%%", p)
		}
		if p := pct(byName, named); p < 58 || p > 62 {
			t.Errorf("%.1f%% of customers chosen by name, want 60%%", p)
		}
		wantRemoteLines, wantRemotePay := 1.0, 15.0
		if warehouses == 1 {
			wantRemoteLines, wantRemotePay = 0, 0
		}
		if p := pct(remoteLines, lines); math.Abs(p-wantRemoteLines) > 0.2 {
			t.Errorf("%d warehouses: %.2f%% remote order lines, want %.0f%%", warehouses, p, wantRemoteLines)
		}
		if p := pct(remotePay, byKind[kindPayment]); math.Abs(p-wantRemotePay) > 1 {
			t.Errorf("%d warehouses: %.1f%% remote Payments, want %.0f%%", warehouses, p, wantRemotePay)
		}
	}
}

func TestNOPM(t *testing.T) {
	for _, tc := range []struct {
		name       string
		r          result.Result
		nopm, tpmc float64
	}{
		{"rollbacks left out of NOPM", result.Result{DurationS: 30, ByKind: map[string]*result.KindStats{
			"new_order": {Transactions: 1000, Rollbacks: 10}}}, 1980, 2000},
		{"no NewOrders", result.Result{DurationS: 30}, 0, 0},
		{"no time", result.Result{ByKind: map[string]*result.KindStats{"new_order": {Transactions: 5}}}, 0, 0},
	} {
		if got := NOPM(&tc.r); math.Abs(got-tc.nopm) > 1e-9 {
			t.Errorf("%s: NOPM = %v, want %v", tc.name, got, tc.nopm)
		}
		if got := TpmC(&tc.r); math.Abs(got-tc.tpmc) > 1e-9 {
			t.Errorf("%s: TpmC = %v, want %v", tc.name, got, tc.tpmc)
		}
		if m := (&tpcc{}).Summarize(&tc.r); len(m) != 2 || m["nopm"] != NOPM(&tc.r) || m["tpmc"] != TpmC(&tc.r) {
			t.Errorf("%s: Summarize = %v", tc.name, m)
		}
	}
}

func TestStyleOption(t *testing.T) {
	spec, err := workload.Lookup(name)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ style, wantErr string }{
		{"statements", ""}, {"batched", ""}, {"routines", ""}, {"procedures", "--style must be statements, batched or routines, got \"procedures\""},
		{"", "--style must be"},
	} {
		_, err := spec.New(spec.WithDefaults(map[string]string{"style": tc.style}))
		if (err == nil) != (tc.wantErr == "") || err != nil && !strings.Contains(err.Error(), tc.wantErr) {
			t.Errorf("--style %q: %v, want %q", tc.style, err, tc.wantErr)
		}
	}
}

// Each dialect's routines: five CREATE PROCEDUREs of the names cleanup drops, in kinds' order,
// templates filled, the MySQL family's marked as fairbench's in the statement itself; each CALL
// passes as many arguments as the procedure takes (OUT ones too, on PostgreSQL).
func TestRoutineSQL(t *testing.T) {
	param := regexp.MustCompile(`\b(?:p|out)_[a-z_]+ `)
	for _, kind := range []sqldb.Kind{sqldb.Postgres, sqldb.MySQL, sqldb.MariaDB} {
		sqls, calls := routineSQL(dialect.For(kind)), callSQL(dialect.For(kind))
		if len(sqls) != len(kinds) || len(routineNames) != len(kinds) || len(calls) != len(kinds) {
			t.Fatalf("%s: %d routines, %d calls for %d kinds", kind, len(sqls), len(calls), len(kinds))
		}
		for i, sql := range sqls {
			n := routineNames[i]
			if !strings.HasPrefix(sql, "CREATE PROCEDURE "+n+"(") || strings.Contains(sql, "{") {
				t.Errorf("%s %s: %.60q...", kind, n, sql)
			}
			if kind.MySQLFamily() != strings.Contains(sql, workload.RoutineComment) {
				t.Errorf("%s %s: marker in the CREATE is %v", kind, n, !kind.MySQLFamily())
			}
			header := sql[:strings.Index(sql, ")\n")]
			want := len(param.FindAllString(header, -1))
			if got := strings.Count(calls[i], "?") + strings.Count(calls[i], "NULL"); got != want || !strings.HasPrefix(calls[i], "CALL "+n+"(") {
				t.Errorf("%s: %q passes %d arguments, %s takes %d", kind, calls[i], got, n, want)
			}
		}
	}
}
