package runspec

import (
	"fmt"
	"math"
	"regexp"
	"strconv"
	"strings"

	units "github.com/docker/go-units"
)

// sizeForm is what ParseSize reads: a decimal number, an optional space and an optional binary
// unit with an optional i and b.
var sizeForm = regexp.MustCompile(`^[0-9]+(\.[0-9]+)? ?([kKmMgGtTpP][iI]?)?[bB]?$`)

// MaxSize bounds sizes (a PiB): beyond it the float arithmetic of a unit would lose bytes.
const MaxSize = int64(1) << 50

// ParseSize reads a size of memory or disk such as 512M, 1.5G, 2GiB, 1T or 65536. Every unit is
// binary (K = KiB = KB = 1024 bytes) and case-insensitive, as in PostgreSQL's and MySQL's own
// configuration files, so --buffer-pool 512MB means what shared_buffers=512MB and
// innodb_buffer_pool_size=512M mean. The parsing is docker/go-units' RAMInBytes; around it,
// ParseSize rejects what that function would round or wrap silently: fractions of a byte,
// zero, and sizes past MaxSize.
func ParseSize(setting, v string) (int64, error) {
	const fix = "use a size like 512M, 1.5G or 2GiB (binary units: K, M, G, T = 1024^n bytes)"
	s := strings.TrimSpace(v)
	// go-units reads more than it should (1e3, and any byte after a unit letter that lowercases
	// to several bytes, such as "2P\xb5"): only its documented forms get through to it.
	if !sizeForm.MatchString(s) {
		return 0, inputErr(setting, v, "not a size", fix)
	}
	n, err := units.RAMInBytes(s)
	if err != nil {
		return 0, inputErr(setting, v, "not a size", fix)
	}
	// RAMInBytes truncates fractions and converts overflowing floats without a word: redo its
	// arithmetic in float and refuse a result that is not the whole number of bytes it reported.
	num := strings.TrimRightFunc(s, func(r rune) bool { return !(r >= '0' && r <= '9') && r != '.' })
	f, ferr := strconv.ParseFloat(strings.TrimSpace(num), 64)
	exact := f * float64(unitOf(s))
	switch {
	case ferr != nil || math.IsNaN(exact):
		return 0, inputErr(setting, v, "not a size", fix)
	case exact > float64(MaxSize):
		return 0, inputErr(setting, v, "more than 1P", fix)
	case exact != math.Trunc(exact):
		return 0, inputErr(setting, v, "not a whole number of bytes", fix)
	case n <= 0:
		return 0, inputErr(setting, v, "must be more than zero", fix)
	}
	return n, nil
}

// unitOf is the multiplier of s's unit, as RAMInBytes reads it (binary, b/ib optional).
func unitOf(s string) int64 {
	sfx := strings.ToLower(strings.TrimSpace(strings.TrimLeft(s, "0123456789. ")))
	if sfx == "" || sfx == "b" {
		return 1
	}
	n, err := units.RAMInBytes("1" + sfx)
	if err != nil {
		return 1
	}
	return n
}

// FormatSize writes bytes the way ParseSize reads them, in the largest unit that divides them.
func FormatSize(n int64) string {
	for _, u := range []struct {
		suffix string
		shift  uint
	}{{"T", 40}, {"G", 30}, {"M", 20}, {"K", 10}} {
		if n > 0 && n%(1<<u.shift) == 0 {
			return fmt.Sprintf("%d%s", n>>u.shift, u.suffix)
		}
	}
	return strconv.FormatInt(n, 10)
}
