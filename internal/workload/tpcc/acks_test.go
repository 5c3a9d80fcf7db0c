package tpcc

import "testing"

func TestOrderKey(t *testing.T) {
	for _, c := range [][3]int{{1, 1, 1}, {1, 10, 3001}, {100000, 10, 1<<31 - 1}, {7, 3, 0}} {
		k := orderKey(c[0], c[1], c[2])
		if w, d, o := splitOrderKey(k); w != c[0] || d != c[1] || o != c[2] {
			t.Errorf("%v packs to %d, unpacks to %d/%d/%d", c, k, w, d, o)
		}
	}
	if orderKey(1, 2, 3) >= orderKey(1, 3, 1) || orderKey(1, 10, 5) >= orderKey(2, 1, 1) {
		t.Error("keys do not sort by warehouse, district, then order")
	}
}
