package main

import (
	"testing"

	"golang.org/x/mod/sumdb/tlog"
)

// C2SP tlog-tiles paths: no height element, 3-digit groups with an x on all but the last.
func TestTilePath(t *testing.T) {
	for _, c := range []struct {
		tile tlog.Tile
		want string
	}{
		{tlog.Tile{H: 8, L: 0, N: 0, W: 256}, "tile/0/000"},
		{tlog.Tile{H: 8, L: 0, N: 5, W: 1}, "tile/0/005.p/1"},
		{tlog.Tile{H: 8, L: 2, N: 999, W: 255}, "tile/2/999.p/255"},
		{tlog.Tile{H: 8, L: 0, N: 1000, W: 256}, "tile/0/x001/000"},
		{tlog.Tile{H: 8, L: 1, N: 1234067, W: 256}, "tile/1/x001/x234/067"},
		{tlog.Tile{H: 8, L: -1, N: 1234067, W: 8}, "tile/entries/x001/x234/067.p/8"},
		{tlog.Tile{H: 8, L: -1, N: 12, W: 256}, "tile/entries/012"},
	} {
		if got := tilePath(c.tile); got != c.want {
			t.Errorf("tilePath(%+v) = %q, want %q", c.tile, got, c.want)
		}
	}
}

func TestTileAt(t *testing.T) {
	for _, c := range []struct {
		level int
		n     int64
		size  int64
		w     int
	}{
		{0, 0, 1, 1}, {0, 0, 256, 256}, {0, 0, 257, 256}, {0, 1, 257, 1},
		{-1, 11, 3000, 184}, {1, 0, 3000, 11}, {1, 0, 65536, 256}, {2, 0, 65537, 1},
	} {
		if got := tileAt(c.level, c.n, c.size); got.W != c.w || got.L != c.level || got.N != c.n || got.H != 8 {
			t.Errorf("tileAt(%d, %d, %d) = %+v, want width %d", c.level, c.n, c.size, got, c.w)
		}
	}
}

func TestParseSize(t *testing.T) {
	for _, s := range []string{"0", "1", "3000", "9223372036854775807"} {
		if _, err := parseSize(s); err != nil {
			t.Errorf("parseSize(%q): %v", s, err)
		}
	}
	for _, s := range []string{"", "01", "+1", "-1", " 1", "1e3", "9223372036854775808"} {
		if _, err := parseSize(s); err == nil {
			t.Errorf("parseSize(%q) succeeded", s)
		}
	}
}

func TestParseBundle(t *testing.T) {
	b := []byte{0, 0, 0, 2, 'h', 'i', 0, 1, 'x'}
	if e, err := parseBundle(b, 3); err != nil || len(e) != 3 || string(e[1]) != "hi" || len(e[0]) != 0 {
		t.Errorf("parseBundle = %q, %v", e, err)
	}
	for _, bad := range [][]byte{b[:8], b[:7], append(append([]byte{}, b...), 0)} {
		if _, err := parseBundle(bad, 3); err == nil {
			t.Errorf("parseBundle(%v) succeeded", bad)
		}
	}
	if _, err := parseBundle(b, 2); err == nil {
		t.Error("parseBundle with the wrong count succeeded")
	}
}

func TestParseTilePath(t *testing.T) {
	for _, p := range []string{"tile/0/000", "tile/0/005.p/1", "tile/1/x001/x234/067", "tile/entries/x001/x234/067.p/8", "tile/entries/012"} {
		tile, ok := parseTilePath(p)
		if !ok || tilePath(tile) != p || tile.H != 8 {
			t.Errorf("parseTilePath(%q) = %+v, %v", p, tile, ok)
		}
	}
	for _, p := range []string{"tile/0/5", "tile/0/0005", "tile/8/0/005", "tile/data/005", "tile/0/005.p/256", "tile/0/005.p/0",
		"tile/0/x000/005", "tile/0/001/002", "tile/-1/000", "tile/entries", "tile/0/005.p", "tiles/0/000", "tile/0/abc"} {
		if tile, ok := parseTilePath(p); ok {
			t.Errorf("parseTilePath(%q) = %+v, want refusal", p, tile)
		}
	}
}
