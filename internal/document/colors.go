package document

import (
	"fmt"
	"strings"

	"github.com/wcharczuk/go-chart/v2/drawing"
)

// engineColors give each engine one colour in every chart fairbench draws, reports and studies
// alike: PostgreSQL blue, MariaDB orange, MySQL green.
var engineColors = map[string]string{"postgres": "#1f77b4", "mariadb": "#ff7f0e", "mysql": "#2ca02c"}

// Palette is the order further series take colours in (matplotlib's, colour-blind friendly).
var Palette = []string{"#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2", "#7f7f7f", "#bcbd22", "#17becf"}

// EngineColor is an engine kind's colour; "" for a kind with none of its own.
func EngineColor(kind string) string { return engineColors[kind] }

// Colors gives one colour per series of the given engine kinds, in order: the first series of a
// kind takes the kind's colour, any further one (another version or setting of it) the next
// palette colour no series has yet.
func Colors(kinds []string) []string {
	used := map[string]bool{}
	out := make([]string, len(kinds))
	for i, k := range kinds {
		if c := EngineColor(k); c != "" && !used[c] {
			out[i], used[c] = c, true
		}
	}
	next := 0
	for i := range out {
		for out[i] == "" {
			c := Palette[next%len(Palette)]
			next++
			if !used[c] || next > len(Palette) {
				out[i], used[c] = c, true
			}
		}
	}
	return out
}

// Shade is a colour mixed halfway to white: a second scenario of the same engine (PostgreSQL
// with autovacuum on beside off) keeps its engine's hue.
func Shade(color string) string {
	c := drawing.ColorFromHex(strings.TrimPrefix(color, "#"))
	mix := func(v uint8) uint8 { return uint8(float64(v) + (255-float64(v))*0.5) }
	return fmt.Sprintf("#%02x%02x%02x", mix(c.R), mix(c.G), mix(c.B))
}

// hex is a "#rrggbb" colour as go-chart takes it; grey where none was given (go-chart fails on "").
func hex(color string) drawing.Color {
	if color == "" {
		color = "#7f7f7f"
	}
	return drawing.ColorFromHex(strings.TrimPrefix(color, "#"))
}
