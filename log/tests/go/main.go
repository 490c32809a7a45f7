// Command verify checks a toolmark log directory with code we did not write: Go's
// golang.org/x/mod/sumdb/note (the checkpoint signature) and golang.org/x/mod/sumdb/tlog
// (tile hashing, inclusion and consistency proofs).
//
//	verify -dir DIR [-old-checkpoint FILE] [-proofs FILE] [-origin ORIGIN]
//
// DIR is laid out as C2SP tlog-tiles: DIR/checkpoint (a C2SP signed note), DIR/vkey (its note
// verifier key, one line), DIR/tile/<L>/<N>[.p/<W>] (hash tiles of height 8; no height element
// in the path) and DIR/tile/entries/<N>[.p/<W>] (entry bundles: each entry a big-endian uint16
// length, then its bytes). <N> is written in 3-digit groups, all but the last prefixed by "x".
//
// It checks, and on the first problem prints a "FAIL: ..." line and exits with status 1:
//   - the checkpoint's signature (note.Open with note.NewVerifier(vkey)) and its body
//     (origin, decimal size, base64 root hash);
//   - the entry bundles of the tree (exactly as many entries as their width, nothing after);
//   - that every file under DIR/tile is what Go's tlog computes from those entries
//     (tlog.RecordHash, tlog.StoredHashesForRecordHash, tlog.ReadTileData), byte for byte:
//     the tiles of the tree, older partial tiles and bundles still published, and nothing else
//     (files beyond the checkpoint's tree, written before the checkpoint, are only counted), and
//     that every tile and bundle of the tree is there;
//   - that the entries hash to the checkpoint's root (tlog.TreeHash), and so do the tiles read
//     through tlog.TileHashReader, the way a client reads them;
//   - inclusion proofs Go makes from the tiles (tlog.ProveRecord, checked by tlog.CheckRecord)
//     for every entry of a log of at most 2000 entries, else for about 500 spread over it;
//   - with -old-checkpoint: its signature, the same origin, a size no larger, a consistency
//     proof to it (tlog.ProveTree, checked by tlog.CheckTree) and inclusion proofs in it;
//   - with -proofs: proofs made by the log under test, one a line,
//     inclusion <index> <tree size> <base64 hash>...
//     consistency <old size> <new size> <base64 hash>...
//     each checked by tlog.CheckRecord / tlog.CheckTree against the roots Go computes for those
//     sizes. Blank lines and lines starting with # are skipped; a file without proofs fails.
//
// The byte-for-byte comparison of every tile is not redundant: in x/mod 0.7.0,
// tlog.TileHashReader does not authenticate every tile it reads (in a tree of 3000 entries it
// returns a changed hash of the full tile tile/0/005 without error), so proofs and roots read
// through it alone would not catch every corrupt tile.
//
// On success it prints one line starting with "ok: ".
package main

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"flag"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"golang.org/x/mod/sumdb/note"
	"golang.org/x/mod/sumdb/tlog"
)

const (
	tileHeight = 8
	tileWidth  = 1 << tileHeight
	// Logs up to this size get an inclusion proof for every entry; larger ones a sample.
	proveAllUpTo = 2000
	sampleSize   = 500
)

func fail(format string, args ...interface{}) {
	fmt.Fprintf(os.Stderr, "FAIL: "+format+"\n", args...)
	os.Exit(1)
}

// nPath writes a tile number as C2SP path elements: 3-digit groups, all but the last with an x.
func nPath(n int64) string {
	groups := []string{fmt.Sprintf("%03d", n%1000)}
	for n >= 1000 {
		n /= 1000
		groups = append([]string{fmt.Sprintf("x%03d", n%1000)}, groups...)
	}
	return strings.Join(groups, "/")
}

// tilePath is the C2SP path of a tile: tile/<L>/<N>[.p/<W>], or tile/entries/<N>[.p/<W>] for
// the entry bundle that Go calls the data tile (level -1).
func tilePath(t tlog.Tile) string {
	level := strconv.Itoa(t.L)
	if t.L == -1 {
		level = "entries"
	}
	p := "tile/" + level + "/" + nPath(t.N)
	if t.W < tileWidth {
		p += ".p/" + strconv.Itoa(t.W)
	}
	return p
}

// tileAt is tile number n at level (-1: entry bundles) as published for a tree of the given
// size: full, or partial at the right edge of the level.
func tileAt(level int, n int64, size int64) tlog.Tile {
	hashLevel := level
	if hashLevel < 0 {
		hashLevel = 0
	}
	w := (size >> uint(tileHeight*hashLevel)) - n*tileWidth
	if w > tileWidth {
		w = tileWidth
	}
	return tlog.Tile{H: tileHeight, L: level, N: n, W: int(w)}
}

// dirTiles is a tlog.TileReader over the C2SP layout in a directory.
type dirTiles struct {
	dir   string
	cache map[string][]byte
}

func (d *dirTiles) Height() int { return tileHeight }

func (d *dirTiles) read(t tlog.Tile) ([]byte, error) {
	p := tilePath(t)
	if b, ok := d.cache[p]; ok {
		return b, nil
	}
	b, err := os.ReadFile(filepath.Join(d.dir, filepath.FromSlash(p)))
	if err != nil {
		return nil, err
	}
	if t.L < 0 {
		return b, nil // entry bundles are not cached: each is read once
	}
	if len(b) != t.W*tlog.HashSize {
		return nil, fmt.Errorf("%s: %d bytes, want %d (%d hashes)", p, len(b), t.W*tlog.HashSize, t.W)
	}
	d.cache[p] = b
	return b, nil
}

func (d *dirTiles) ReadTiles(tiles []tlog.Tile) ([][]byte, error) {
	out := make([][]byte, len(tiles))
	for i, t := range tiles {
		b, err := d.read(t)
		if err != nil {
			return nil, err
		}
		out[i] = b
	}
	return out, nil
}

func (d *dirTiles) SaveTiles([]tlog.Tile, [][]byte) {}

func max(a, b int) int {
	if a > b {
		return a
	}
	return b
}

// parseTilePath reads a C2SP path (tile/<L>/<N>[.p/<W>] or tile/entries/<N>[.p/<W>]) with
// tlog.ParseTilePath, which takes Go's form (tile/8/<L or data>/<N>[.p/<W>]) and accepts only
// the canonical spelling.
func parseTilePath(p string) (tlog.Tile, bool) {
	rest := strings.TrimPrefix(p, "tile/")
	if rest == p {
		return tlog.Tile{}, false
	}
	if strings.HasPrefix(rest, "entries/") {
		rest = "data/" + strings.TrimPrefix(rest, "entries/")
	} else if strings.HasPrefix(rest, "data/") {
		return tlog.Tile{}, false
	}
	t, err := tlog.ParseTilePath(fmt.Sprintf("tile/%d/%s", tileHeight, rest))
	if err != nil || tilePath(t) != p {
		return tlog.Tile{}, false
	}
	return t, true
}

// checkTile compares a published tile or entry bundle with what Go's tlog computes from the
// entries (leaves, and the stored hashes built from them). A tile that reaches beyond the tree
// of the checkpoint is only reported as ahead.
func checkTile(t tlog.Tile, data []byte, size int64, leaves []tlog.Hash, mem tlog.HashReader) (ahead bool, err error) {
	if t.L == -1 {
		if t.N*tileWidth+int64(t.W) > size {
			return true, nil
		}
		entries, err := parseBundle(data, t.W)
		if err != nil {
			return false, err
		}
		for j, e := range entries {
			i := t.N*tileWidth + int64(j)
			if h := tlog.RecordHash(e); h != leaves[i] {
				return false, fmt.Errorf("entry %d (index %d) hashes to %v, the entry in %s to %v",
					j, i, h, tilePath(tileAt(-1, t.N, size)), leaves[i])
			}
		}
		return false, nil
	}
	if t.N*tileWidth+int64(t.W) > size>>uint(tileHeight*t.L) {
		return true, nil
	}
	want, err := tlog.ReadTileData(t, mem)
	if err != nil {
		return false, err
	}
	if len(data) != len(want) {
		return false, fmt.Errorf("%d bytes, want %d (%d hashes)", len(data), len(want), t.W)
	}
	for k := 0; k < t.W; k++ {
		var got, exp tlog.Hash
		copy(got[:], data[k*tlog.HashSize:])
		copy(exp[:], want[k*tlog.HashSize:])
		if got == exp {
			continue
		}
		if t.L == 0 {
			i := t.N*tileWidth + int64(k)
			return false, fmt.Errorf("hash %d, the leaf of entry %d, is %v; the entry in %s hashes to %v",
				k, i, got, tilePath(tileAt(-1, t.N, size)), exp)
		}
		return false, fmt.Errorf("hash %d is %v; Go's tlog computes %v from the entries", k, got, exp)
	}
	return false, nil
}

type checkpoint struct {
	origin string
	size   int64
	root   tlog.Hash
	signer string
}

func parseSize(s string) (int64, error) {
	if s == "" || strings.Trim(s, "0123456789") != "" || (len(s) > 1 && s[0] == '0') {
		return 0, fmt.Errorf("%q is not a decimal number without leading zeros", s)
	}
	return strconv.ParseInt(s, 10, 64)
}

func decodeHash(s string) (tlog.Hash, error) {
	var h tlog.Hash
	b, err := base64.StdEncoding.DecodeString(s)
	if err != nil {
		return h, fmt.Errorf("%q is not standard base64: %v", s, err)
	}
	if len(b) != tlog.HashSize {
		return h, fmt.Errorf("%q decodes to %d bytes, not %d", s, len(b), tlog.HashSize)
	}
	copy(h[:], b)
	return h, nil
}

func openCheckpoint(file string, verifiers note.Verifiers) checkpoint {
	msg, err := os.ReadFile(file)
	if err != nil {
		fail("%v", err)
	}
	n, err := note.Open(msg, verifiers)
	if err != nil {
		fail("%s: note.Open: %v", file, err)
	}
	// note.Open leaves the text with its final newline; the body is origin, size, root, then
	// optional extension lines.
	lines := strings.Split(strings.TrimSuffix(n.Text, "\n"), "\n")
	if len(lines) < 3 {
		fail("%s: the checkpoint body has %d lines, want origin, size and root hash", file, len(lines))
	}
	cp := checkpoint{origin: lines[0], signer: n.Sigs[0].Name}
	if cp.origin == "" {
		fail("%s: empty origin line", file)
	}
	if cp.size, err = parseSize(lines[1]); err != nil {
		fail("%s: tree size: %v", file, err)
	}
	if cp.root, err = decodeHash(lines[2]); err != nil {
		fail("%s: root hash: %v", file, err)
	}
	return cp
}

// parseBundle splits an entry bundle into its entries; it must hold exactly want of them.
func parseBundle(data []byte, want int) ([][]byte, error) {
	var entries [][]byte
	for len(data) > 0 {
		if len(data) < 2 {
			return nil, fmt.Errorf("truncated length after %d entries", len(entries))
		}
		n := int(binary.BigEndian.Uint16(data))
		data = data[2:]
		if len(data) < n {
			return nil, fmt.Errorf("entry %d of the bundle: length %d, only %d bytes left", len(entries), n, len(data))
		}
		entries = append(entries, data[:n])
		data = data[n:]
	}
	if len(entries) != want {
		return nil, fmt.Errorf("%d entries, want %d", len(entries), want)
	}
	return entries, nil
}

// sample is every index below size if there are few, else about sampleSize spread over the log
// with both ends and the entries around the first tile boundaries.
func sample(size int64) []int64 {
	if size <= proveAllUpTo {
		out := make([]int64, size)
		for i := range out {
			out[i] = int64(i)
		}
		return out
	}
	set := map[int64]bool{}
	for _, i := range []int64{0, 1, 255, 256, 257, 65535, 65536, size - 257, size - 256, size - 2, size - 1} {
		if i >= 0 && i < size {
			set[i] = true
		}
	}
	for k := int64(0); k < sampleSize; k++ {
		set[k*(size-1)/(sampleSize-1)] = true
	}
	out := make([]int64, 0, len(set))
	for i := range set {
		out = append(out, i)
	}
	sort.Slice(out, func(a, b int) bool { return out[a] < out[b] })
	return out
}

func hashList(hs []tlog.Hash) string {
	s := make([]string, len(hs))
	for i, h := range hs {
		s[i] = h.String()
	}
	return "[" + strings.Join(s, " ") + "]"
}

func main() {
	dir := flag.String("dir", "", "the log directory (C2SP tlog-tiles layout)")
	oldFile := flag.String("old-checkpoint", "", "an earlier checkpoint of the log, to prove consistency with")
	proofsFile := flag.String("proofs", "", "proofs made by the log under test, to check")
	wantOrigin := flag.String("origin", "", "if set, the origin the checkpoint must have")
	flag.Parse()
	if *dir == "" || flag.NArg() != 0 {
		fmt.Fprintln(os.Stderr, "usage: verify -dir DIR [-old-checkpoint FILE] [-proofs FILE] [-origin ORIGIN]")
		os.Exit(2)
	}

	// 1. The checkpoint, signed by the key in vkey.
	vkey, err := os.ReadFile(filepath.Join(*dir, "vkey"))
	if err != nil {
		fail("%v", err)
	}
	vkeyLine := strings.TrimSuffix(string(vkey), "\n")
	if strings.Contains(vkeyLine, "\n") {
		fail("%s/vkey: more than one line", *dir)
	}
	verifier, err := note.NewVerifier(vkeyLine)
	if err != nil {
		fail("%s/vkey: note.NewVerifier: %v", *dir, err)
	}
	verifiers := note.VerifierList(verifier)
	cp := openCheckpoint(filepath.Join(*dir, "checkpoint"), verifiers)
	if *wantOrigin != "" && cp.origin != *wantOrigin {
		fail("checkpoint origin is %q, want %q", cp.origin, *wantOrigin)
	}
	size, root := cp.size, cp.root

	// 2. The entries, from the bundles of the tree, and the tree Go's tlog builds from them.
	tiles := &dirTiles{dir: *dir, cache: map[string][]byte{}}
	// Grown bundle by bundle: a checkpoint claiming an absurd size fails at its first missing
	// bundle instead of allocating for it.
	var leaves []tlog.Hash
	for k := int64(0); k*tileWidth < size; k++ {
		t := tileAt(-1, k, size)
		data, err := tiles.read(t)
		if err != nil {
			fail("entry bundle: %v", err)
		}
		entries, err := parseBundle(data, t.W)
		if err != nil {
			fail("entry bundle %s: %v", tilePath(t), err)
		}
		for _, e := range entries {
			leaves = append(leaves, tlog.RecordHash(e))
		}
	}
	var stored []tlog.Hash
	mem := tlog.HashReaderFunc(func(indexes []int64) ([]tlog.Hash, error) {
		out := make([]tlog.Hash, len(indexes))
		for i, x := range indexes {
			if x < 0 || x >= int64(len(stored)) {
				return nil, fmt.Errorf("stored hash %d is not in the tree", x)
			}
			out[i] = stored[x]
		}
		return out, nil
	})
	for i, leaf := range leaves {
		hs, err := tlog.StoredHashesForRecordHash(int64(i), leaf, mem)
		if err != nil {
			fail("tlog.StoredHashesForRecordHash(%d): %v", i, err)
		}
		stored = append(stored, hs...)
	}

	// 3. Every file under tile/ is what Go's tlog computes from the entries (or lies beyond
	// the checkpoint), and every tile of the tree is there.
	seen := map[string]bool{}
	stale, ahead := 0, 0
	tileDir := filepath.Join(*dir, "tile")
	if _, err := os.Stat(tileDir); size == 0 && os.IsNotExist(err) {
		tileDir = "" // an empty log need not have published anything
	}
	walkErr := filepath.WalkDir(tileDir, func(file string, e fs.DirEntry, err error) error {
		if tileDir == "" {
			return filepath.SkipDir
		}
		if err != nil || e.IsDir() {
			return err
		}
		rel, err := filepath.Rel(*dir, file)
		if err != nil {
			return err
		}
		rel = filepath.ToSlash(rel)
		t, ok := parseTilePath(rel)
		if !ok {
			return fmt.Errorf("%s: not a tile or entry bundle path", rel)
		}
		data, err := os.ReadFile(file)
		if err != nil {
			return err
		}
		seen[rel] = true
		isAhead, err := checkTile(t, data, size, leaves, mem)
		if err != nil {
			return fmt.Errorf("%s: %v", rel, err)
		}
		if isAhead {
			ahead++
		} else if t.W < tileWidth && tileAt(t.L, t.N, size).W != t.W {
			stale++
		}
		return nil
	})
	if walkErr != nil {
		fail("%v", walkErr)
	}
	expected := 0
	for level := -1; size>>uint(tileHeight*max(level, 0)) > 0; level++ {
		for n := int64(0); n*tileWidth < size>>uint(tileHeight*max(level, 0)); n++ {
			if p := tilePath(tileAt(level, n, size)); !seen[p] {
				fail("%s is missing (a tile of the tree of size %d)", p, size)
			}
			expected++
		}
	}

	// 4. The entries hash to the checkpoint's root, and so do the tiles, read the way a client
	// reads them (tlog.TileHashReader).
	if size == 0 {
		if root != sha256.Sum256(nil) {
			fail("empty tree: root is %v, want SHA-256 of the empty string", root)
		}
	} else if got, err := tlog.TreeHash(size, mem); err != nil || got != root {
		fail("the %d entries hash to %v (%v), the checkpoint's root is %v", size, got, err, root)
	}
	hr := tlog.TileHashReader(tlog.Tree{N: size, Hash: root}, tiles)
	if size > 0 {
		if got, err := tlog.TreeHash(size, hr); err != nil || got != root {
			fail("tlog.TreeHash(%d) through tlog.TileHashReader is %v (%v), the checkpoint's root is %v", size, got, err, root)
		}
	}
	roots := map[int64]tlog.Hash{size: root}
	rootAt := func(n int64) tlog.Hash {
		if h, ok := roots[n]; ok {
			return h
		}
		h, err := tlog.TreeHash(n, mem)
		if err != nil {
			fail("tlog.TreeHash(%d): %v", n, err)
		}
		roots[n] = h
		return h
	}

	// 5. Inclusion proofs made by Go from the tiles.
	proved := 0
	for _, i := range sample(size) {
		p, err := tlog.ProveRecord(size, i, hr)
		if err != nil {
			fail("tlog.ProveRecord(%d, %d): %v", size, i, err)
		}
		if err := tlog.CheckRecord(p, size, root, i, leaves[i]); err != nil {
			fail("tlog.CheckRecord for entry %d in tree %d: %v", i, size, err)
		}
		proved++
	}
	summary := fmt.Sprintf("ok: %q size %d root %v signed by %s: the %d entries hash to the root; "+
		"all %d tile files are what Go's tlog computes from them (%d of the tree, %d stale partial, %d beyond the checkpoint); "+
		"%d inclusion proofs (Go's, from the tiles) check",
		cp.origin, size, root, cp.signer, size, len(seen), expected, stale, ahead, proved)

	// 6. Consistency with an older checkpoint.
	if *oldFile != "" {
		old := openCheckpoint(*oldFile, verifiers)
		if old.origin != cp.origin {
			fail("%s: origin %q, the checkpoint's is %q", *oldFile, old.origin, cp.origin)
		}
		if old.size > size {
			fail("%s: size %d is larger than the checkpoint's %d", *oldFile, old.size, size)
		}
		oldProved := 0
		if old.size == 0 {
			if old.root != sha256.Sum256(nil) {
				fail("%s: empty tree with root %v, want SHA-256 of the empty string", *oldFile, old.root)
			}
		} else {
			p, err := tlog.ProveTree(size, old.size, hr)
			if err != nil {
				fail("tlog.ProveTree(%d, %d): %v", size, old.size, err)
			}
			if err := tlog.CheckTree(p, size, root, old.size, old.root); err != nil {
				fail("%s (size %d, root %v) is not consistent with the checkpoint: tlog.CheckTree: %v (the tiles give root %v for size %d)",
					*oldFile, old.size, old.root, err, rootAt(old.size), old.size)
			}
			for _, i := range sample(old.size) {
				p, err := tlog.ProveRecord(old.size, i, hr)
				if err != nil {
					fail("tlog.ProveRecord(%d, %d): %v", old.size, i, err)
				}
				if err := tlog.CheckRecord(p, old.size, old.root, i, leaves[i]); err != nil {
					fail("tlog.CheckRecord for entry %d in the old tree %d: %v", i, old.size, err)
				}
				oldProved++
			}
		}
		summary += fmt.Sprintf("; consistent with %s (size %d; %d inclusion proofs in it)", filepath.Base(*oldFile), old.size, oldProved)
	}

	// 7. Proofs made by the log under test.
	if *proofsFile != "" {
		inclusion, consistency := checkProofs(*proofsFile, size, leaves, rootAt, mem)
		summary += fmt.Sprintf("; %d inclusion and %d consistency proofs from %s check", inclusion, consistency, filepath.Base(*proofsFile))
	}
	fmt.Println(summary)
}

func checkProofs(file string, size int64, leaves []tlog.Hash, rootAt func(int64) tlog.Hash, hr tlog.HashReader) (inclusion, consistency int) {
	data, err := os.ReadFile(file)
	if err != nil {
		fail("%v", err)
	}
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(nil, 1<<20)
	for line := 1; sc.Scan(); line++ {
		text := sc.Text()
		f := strings.Fields(text)
		if len(f) == 0 || strings.HasPrefix(f[0], "#") {
			continue
		}
		where := fmt.Sprintf("%s:%d", file, line)
		if len(f) < 3 {
			fail("%s: want \"inclusion INDEX SIZE HASH...\" or \"consistency OLD NEW HASH...\", got %q", where, text)
		}
		a, errA := parseSize(f[1])
		b, errB := parseSize(f[2])
		if errA != nil || errB != nil {
			fail("%s: bad number in %q", where, text)
		}
		proof := make([]tlog.Hash, len(f)-3)
		for i, s := range f[3:] {
			if proof[i], err = decodeHash(s); err != nil {
				fail("%s: proof hash %d: %v", where, i, err)
			}
		}
		switch f[0] {
		case "inclusion":
			index, n := a, b
			if index >= n || n > size {
				fail("%s: want index < size <= %d, got index %d size %d", where, size, index, n)
			}
			if err := tlog.CheckRecord(tlog.RecordProof(proof), n, rootAt(n), index, leaves[index]); err != nil {
				want, _ := tlog.ProveRecord(n, index, hr)
				fail("%s: inclusion proof of entry %d in tree %d: tlog.CheckRecord: %v\n  ours: %s\n  Go's: %s",
					where, index, n, err, hashList(proof), hashList(want))
			}
			inclusion++
		case "consistency":
			old, n := a, b
			if old < 1 || old > n || n > size {
				fail("%s: want 1 <= old <= new <= %d, got old %d new %d", where, size, old, n)
			}
			if err := tlog.CheckTree(tlog.TreeProof(proof), n, rootAt(n), old, rootAt(old)); err != nil {
				want, _ := tlog.ProveTree(n, old, hr)
				fail("%s: consistency proof from %d to %d: tlog.CheckTree: %v\n  ours: %s\n  Go's: %s",
					where, old, n, err, hashList(proof), hashList(want))
			}
			consistency++
		default:
			fail("%s: unknown proof kind %q", where, f[0])
		}
	}
	if err := sc.Err(); err != nil {
		fail("%s: %v", file, err)
	}
	if inclusion+consistency == 0 {
		fail("%s: no proofs in it", file)
	}
	return inclusion, consistency
}
