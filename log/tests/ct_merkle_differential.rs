//! Differential tests of `merkle` and `tiles` against an independent implementation, the
//! `ct-merkle` crate (different author and design, RFC 6962 hashing): roots, inclusion proofs and
//! consistency proofs must be byte-identical, each side's verifier must accept the other's
//! proofs, and ours must reject any single flipped bit. Then the same answers must come out of
//! tiles (`tile_data` written as a log would with `new_tiles`, read back with `TileHashReader`).
//!
//! One tree of 100,000 leaves is built once; sizes are sampled from it with a seeded PRNG, so
//! every run checks the same cases and a failure names its seed-determined inputs.

use std::collections::HashMap;
use std::sync::OnceLock;

use ct_merkle::mem_backed_tree::MemoryBackedTree;
use ct_merkle::{ConsistencyProof, InclusionProof, RootHash};
use sha2::Sha256;
use toolmark_log::merkle::{
    Hash, HashReader, MemoryHashes, ProofError, consistency_proof, inclusion_proof, leaf_hash,
    tree_hash, verify_consistency, verify_inclusion,
};
use toolmark_log::tiles::{TileHashReader, TileId, new_tiles, tile_data, tiles_for_size};

const MAX_SIZE: u64 = 100_000;
const SEED: u64 = 0x746f_6f6c_6d61_726b; // "toolmark"

/// SplitMix64: small, seeded, good enough to pick test cases.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    /// Uniform-ish in `lo..=hi`.
    fn range(&mut self, lo: u64, hi: u64) -> u64 {
        lo + self.next() % (hi - lo + 1)
    }
}

fn entry(i: u64) -> Vec<u8> {
    format!("toolmark differential entry {i}").into_bytes()
}

/// Our tree of `MAX_SIZE` leaves, built once and shared by the tests of this file.
fn ours_tree() -> &'static MemoryHashes {
    static TREE: OnceLock<MemoryHashes> = OnceLock::new();
    TREE.get_or_init(|| {
        let mut m = MemoryHashes::new();
        for i in 0..MAX_SIZE {
            assert_eq!(m.append_entry(&entry(i)).unwrap(), i);
        }
        m
    })
}

/// Sizes to check: edges around powers of two and tile boundaries, then random ones; sorted.
fn sample_sizes(rng: &mut Rng, random: usize) -> Vec<u64> {
    let mut s = vec![
        1, 2, 3, 4, 5, 7, 8, 9, 255, 256, 257, 511, 512, 513, 1023, 1024, 65_535, 65_536, 65_537,
        70_000, MAX_SIZE,
    ];
    for _ in 0..random {
        // Half small, half anywhere, so small trees (many edge shapes) get their share.
        let hi = if rng.next() % 2 == 0 { 2_000 } else { MAX_SIZE };
        s.push(rng.range(1, hi));
    }
    s.sort_unstable();
    s.dedup();
    s
}

fn to_bytes(proof: &[Hash]) -> Vec<u8> {
    proof.iter().flat_map(|h| h.0).collect()
}

fn flip(proof: &[Hash], bit: u64) -> Vec<Hash> {
    let mut p = proof.to_vec();
    let bits = 256 * p.len() as u64;
    let bit = bit % bits;
    p[(bit / 256) as usize].0[((bit % 256) / 8) as usize] ^= 1 << (bit % 8);
    p
}

fn flip_hash(h: &Hash, bit: u64) -> Hash {
    flip(&[*h], bit)[0]
}

#[test]
fn roots_and_proofs_match_ct_merkle() {
    let mut rng = Rng(SEED);
    let ours = ours_tree();
    let sizes = sample_sizes(&mut rng, 40);
    let mut ct: MemoryBackedTree<Sha256, Vec<u8>> = MemoryBackedTree::new();
    let (mut roots, mut incl, mut cons) = (0, 0, 0);

    for &size in &sizes {
        while ct.len() < size {
            ct.push(entry(ct.len()));
        }
        // Root.
        let ct_root = ct.root();
        let root = tree_hash(size, ours).unwrap();
        assert_eq!(
            root.0.as_slice(),
            ct_root.as_bytes().as_slice(),
            "root({size})"
        );
        roots += 1;

        // Inclusion: first, last, and random leaves.
        let mut idxs = vec![0, size - 1];
        idxs.extend((0..8).map(|_| rng.range(0, size - 1)));
        for index in idxs {
            let leaf = leaf_hash(&entry(index));
            let proof = inclusion_proof(index, size, ours).unwrap();
            let ct_proof = ct.prove_inclusion(index as usize);
            assert_eq!(
                to_bytes(&proof),
                ct_proof.as_bytes(),
                "inclusion({index}, {size})"
            );
            verify_inclusion(&proof, size, &root, index, &leaf).unwrap();
            // ct-merkle's verifier accepts our bytes.
            let from_ours = InclusionProof::<Sha256>::from_bytes(to_bytes(&proof));
            ct_root
                .verify_inclusion(&entry(index), index, &from_ours)
                .unwrap();
            // Any single flipped bit is rejected: in the proof, the root or the leaf.
            let bit = rng.next();
            if !proof.is_empty() {
                assert!(matches!(
                    verify_inclusion(&flip(&proof, bit), size, &root, index, &leaf),
                    Err(ProofError::InvalidProof)
                ));
            }
            assert!(verify_inclusion(&proof, size, &flip_hash(&root, bit), index, &leaf).is_err());
            assert!(verify_inclusion(&proof, size, &root, index, &flip_hash(&leaf, bit)).is_err());
            // Wrong index or size (when the tree shape differs) is rejected too.
            if size > 1 {
                let other = (index + 1) % size;
                assert!(verify_inclusion(&proof, size, &root, other, &leaf).is_err());
            }
            // Dropping or adding a hash is rejected.
            if let Some((_, shorter)) = proof.split_last() {
                assert!(verify_inclusion(shorter, size, &root, index, &leaf).is_err());
            }
            let mut longer = proof.clone();
            longer.push(root);
            assert!(verify_inclusion(&longer, size, &root, index, &leaf).is_err());
            incl += 1;
        }

        // Consistency: from 1, from size - 1, and random old sizes.
        let mut olds = vec![1, size - 1];
        olds.extend((0..8).map(|_| rng.range(1, size)));
        for old in olds.into_iter().filter(|&o| o >= 1 && o < size) {
            let old_root = tree_hash(old, ours).unwrap();
            let proof = consistency_proof(old, size, ours).unwrap();
            let ct_proof = ct.prove_consistency((size - old) as usize);
            assert_eq!(
                to_bytes(&proof),
                ct_proof.as_bytes(),
                "consistency({old}, {size})"
            );
            verify_consistency(&proof, size, &root, old, &old_root).unwrap();
            let from_ours = ConsistencyProof::<Sha256>::try_from_bytes(to_bytes(&proof)).unwrap();
            let ct_old = RootHash::<Sha256>::new(old_root.0.into(), old);
            ct_root.verify_consistency(&ct_old, &from_ours).unwrap();

            let bit = rng.next();
            if !proof.is_empty() {
                assert!(matches!(
                    verify_consistency(&flip(&proof, bit), size, &root, old, &old_root),
                    Err(ProofError::InvalidProof)
                ));
            }
            assert!(
                verify_consistency(&proof, size, &flip_hash(&root, bit), old, &old_root).is_err()
            );
            assert!(
                verify_consistency(&proof, size, &root, old, &flip_hash(&old_root, bit)).is_err()
            );
            if let Some((_, shorter)) = proof.split_last() {
                assert!(verify_consistency(shorter, size, &root, old, &old_root).is_err());
            }
            cons += 1;
        }
        // Same size: empty proof, equal roots.
        assert!(consistency_proof(size, size, ours).unwrap().is_empty());
        verify_consistency(&[], size, &root, size, &root).unwrap();
    }
    assert!(sizes.len() >= 50, "{} sizes", sizes.len());
    assert!(
        roots + incl + cons >= 600,
        "{roots} roots, {incl} inclusion, {cons} consistency"
    );
}

/// A tile store as a log would fill it: at each published size, write `new_tiles` (keyed by
/// the full id, so the partial tiles of earlier sizes stay readable, as the spec requires).
struct TileStore {
    tiles: HashMap<TileId, Vec<u8>>,
    fetches: std::cell::Cell<u64>,
}

impl TileStore {
    fn fetch(&self, t: &TileId) -> Result<Vec<u8>, ProofError> {
        self.fetches.set(self.fetches.get() + 1);
        self.tiles
            .get(t)
            .cloned()
            .ok_or_else(|| ProofError::storage(format!("no tile {}", t.path())))
    }
}

#[test]
fn tiles_reproduce_memory_hashes() {
    let mut rng = Rng(SEED ^ 0x7469_6c65);
    let ours = ours_tree();
    let sizes = sample_sizes(&mut rng, 25);
    let mut store = TileStore {
        tiles: HashMap::new(),
        fetches: std::cell::Cell::new(0),
    };
    let mut prev = 0;
    for &size in &sizes {
        for t in new_tiles(prev, size) {
            let data = tile_data(&t, ours).unwrap();
            assert_eq!(data.len(), 32 * usize::from(t.width));
            store.tiles.insert(t, data);
        }
        prev = size;

        // Every tile of this size is in the store, with the bytes tile_data gives.
        for t in tiles_for_size(size) {
            assert_eq!(
                store.tiles.get(&t),
                Some(&tile_data(&t, ours).unwrap()),
                "{t}"
            );
        }
        // Level-0 tiles hold leaf hashes; level-1 hashes are roots of full level-0 tiles.
        if size >= 256 {
            let t0 = &store.tiles[&TileId::full(0, 0)];
            assert_eq!(&t0[32..64], &leaf_hash(&entry(1)).0);
            let level1 = TileId {
                level: 1,
                index: 0,
                width: (size / 256).min(256) as u16,
            };
            assert_eq!(
                &store.tiles[&level1][..32],
                &tree_hash(256, ours).unwrap().0
            );
        }

        let reader = TileHashReader::new(size, |t: &TileId| store.fetch(t));
        let root = tree_hash(size, ours).unwrap();
        assert_eq!(tree_hash(size, &reader).unwrap(), root, "tile root({size})");
        for _ in 0..6 {
            let index = rng.range(0, size - 1);
            assert_eq!(
                inclusion_proof(index, size, &reader).unwrap(),
                inclusion_proof(index, size, ours).unwrap(),
                "tile inclusion({index}, {size})"
            );
            let old = rng.range(1, size);
            assert_eq!(
                consistency_proof(old, size, &reader).unwrap(),
                consistency_proof(old, size, ours).unwrap(),
                "tile consistency({old}, {size})"
            );
            // Every stored hash of earlier sizes' subtrees reads back the same.
            let idx = rng.range(0, toolmark_log::merkle::stored_hash_count(size) - 1);
            let (level, n) = toolmark_log::merkle::split_stored_hash_index(idx);
            let complete = (n + 1) << level <= size;
            match reader.read_hashes(&[idx]) {
                Ok(h) => {
                    assert!(complete);
                    assert_eq!(h, ours.read_hashes(&[idx]).unwrap());
                }
                Err(ProofError::MissingHash(i)) => assert!(!complete && i == idx),
                Err(e) => panic!("{e}"),
            }
        }
    }
    // A handful of tiles per proof, not one per hash.
    assert!(store.fetches.get() > 0);

    // The reader authenticates nothing, but a corrupted tile cannot produce a proof that
    // verifies against the real root.
    let size = 70_000;
    let root = tree_hash(size, ours).unwrap();
    let index = 12_345;
    let target = TileId::full(0, index / 256);
    let mut corrupt = store.tiles.clone();
    corrupt.get_mut(&target).unwrap()[((index as usize % 256) ^ 1) * 32] ^= 1;
    let bad = TileHashReader::new(size, |t: &TileId| {
        corrupt.get(t).cloned().ok_or(ProofError::MissingHash(0))
    });
    let proof = inclusion_proof(index, size, &bad).unwrap();
    assert!(verify_inclusion(&proof, size, &root, index, &leaf_hash(&entry(index))).is_err());
    // (The root itself comes from the level-2 tile here, so it is unaffected: tree_hash(size)
    // over tiles is only as good as the tiles, which is why readers compare it with a
    // checkpoint.)

    // Wrong-length tile bytes are an error, not a panic or a wrong hash.
    let short = TileHashReader::new(size, |_: &TileId| Ok(vec![0u8; 31]));
    assert!(matches!(
        tree_hash(size, &short),
        Err(ProofError::BadTile { .. })
    ));
    // Fetch errors pass through.
    let failing = TileHashReader::new(size, |_: &TileId| Err(ProofError::storage("offline")));
    assert!(matches!(
        inclusion_proof(1, size, &failing),
        Err(ProofError::Storage(_))
    ));
    // An invalid tile id is refused by tile_data.
    assert!(
        tile_data(
            &TileId {
                level: 0,
                index: 0,
                width: 0
            },
            ours
        )
        .is_err()
    );
    assert!(
        tile_data(
            &TileId {
                level: 0,
                index: 0,
                width: 257
            },
            ours
        )
        .is_err()
    );
    assert!(tile_data(&TileId::full(8, 0), ours).is_err());
}
