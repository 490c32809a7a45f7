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
//   - that the tiles hash to the checkpoint's root (tlog.TreeHash), then reads every leaf hash
//     through tlog.TileHashReader, which authenticates each tile it reads against that root;
//   - that every entry of every bundle hashes (tlog.RecordHash) to its leaf;
//   - inclusion proofs made by Go (tlog.ProveRecord, checked by tlog.CheckRecord) for every entry
//     of a log of at most 2000 entries, else for about 500 spread over the log;
//   - with -old-checkpoint: its signature, that it has the same origin and is no larger, and a
//     consistency proof to it (tlog.ProveTree, checked by tlog.CheckTree);
//   - with -proofs: proofs made by the log under test, one a line,
//     inclusion <index> <tree size> <base64 hash>...
//     consistency <old size> <new size> <base64 hash>...
//     each checked by tlog.CheckRecord / tlog.CheckTree against the roots that Go computes for
//     those sizes from the (authenticated) tiles. Blank lines and lines starting with # are skipped.
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

// rawHashes reads stored hashes straight from the tiles of a tree of the given size, without
// authenticating them: only to say what root the tiles give when it is not the checkpoint's.
func rawHashes(d *dirTiles, size int64) tlog.HashReader {
	return tlog.HashReaderFunc(func(indexes []int64) ([]tlog.Hash, error) {
		out := make([]tlog.Hash, len(indexes))
		for i, x := range indexes {
			least := tlog.TileForIndex(tileHeight, x)
			t := tileAt(least.L, least.N, size)
			data, err := d.read(t)
			if err != nil {
				return nil, err
			}
			if out[i], err = tlog.HashFromTile(t, data, x); err != nil {
				return nil, err
			}
		}
		return out, nil
	})
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

	// 2. The tiles give the checkpoint's root.
	tiles := &dirTiles{dir: *dir, cache: map[string][]byte{}}
	if size == 0 {
		if root != sha256.Sum256(nil) {
			fail("empty tree: root is %v, want SHA-256 of the empty string", root)
		}
	} else {
		got, err := tlog.TreeHash(size, rawHashes(tiles, size))
		if err != nil {
			fail("reading the tiles for the tree hash of size %d: %v", size, err)
		}
		if got != root {
			fail("the tiles of the first %d entries hash to %v, the checkpoint's root is %v", size, got, root)
		}
	}
	hr := tlog.TileHashReader(tlog.Tree{N: size, Hash: root}, tiles)
	if size > 0 {
		got, err := tlog.TreeHash(size, hr)
		if err != nil {
			fail("tlog.TreeHash(%d) through the authenticating tile reader: %v", size, err)
		}
		if got != root {
			fail("tlog.TreeHash(%d) is %v, the checkpoint's root is %v", size, got, root)
		}
	}
	roots := map[int64]tlog.Hash{size: root}
	rootAt := func(n int64) tlog.Hash {
		if h, ok := roots[n]; ok {
			return h
		}
		h, err := tlog.TreeHash(n, hr)
		if err != nil {
			fail("tlog.TreeHash(%d): %v", n, err)
		}
		roots[n] = h
		return h
	}

	// 3. Every entry of every bundle hashes to its (authenticated) leaf.
	leaves := make([]tlog.Hash, size)
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
		indexes := make([]int64, len(entries))
		for j, e := range entries {
			i := k*tileWidth + int64(j)
			leaves[i] = tlog.RecordHash(e)
			indexes[j] = tlog.StoredHashIndex(0, i)
		}
		got, err := hr.ReadHashes(indexes)
		if err != nil {
			fail("reading the leaf hashes of entries %d..%d: %v", k*tileWidth, k*tileWidth+int64(len(entries))-1, err)
		}
		for j := range entries {
			i := k*tileWidth + int64(j)
			if got[j] != leaves[i] {
				fail("entry %d (in %s) hashes to %v, its leaf in the tiles is %v", i, tilePath(t), leaves[i], got[j])
			}
		}
	}

	// 4. Inclusion proofs made by Go.
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
	summary := fmt.Sprintf("ok: %q size %d root %v signed by %s: tiles hash to the root, %d entries match their leaves, %d inclusion proofs (Go's) check",
		cp.origin, size, root, cp.signer, size, proved)

	// 5. Consistency with an older checkpoint.
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

	// 6. Proofs made by the log under test.
	if *proofsFile != "" {
		inclusion, consistency := checkProofs(*proofsFile, size, leaves, rootAt, hr)
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
