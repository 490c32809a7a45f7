//! Any UTF-8 text: parsing it as a C2SP tile path never panics, and a path that parses is the
//! one spelling the writer emits for what it names (`TileId::path` for a tile, `bundle_path` for
//! an entry bundle), with the level and width inside their ranges. The other way round, the
//! path of any tile or bundle (level, index and width taken from the first bytes) parses back.
#![no_main]
use libfuzzer_sys::fuzz_target;
use toolmark_log::tiles::{self, ParsedPath, TileId};

fuzz_target!(|data: &[u8]| {
    if let Ok(path) = std::str::from_utf8(data) {
        match tiles::parse_tile_path(path) {
            Ok(ParsedPath::Tile(t)) => {
                assert!(t.level <= 63 && (1..=256).contains(&t.width), "{t:?}");
                assert_eq!(t.path(), path, "{t:?}");
            }
            Ok(ParsedPath::Bundle { index, width }) => {
                assert!((1..=256).contains(&width), "width {width}");
                assert_eq!(tiles::bundle_path(index, width), path);
            }
            Err(_) => {}
        }
    }
    if let Some(b) = data.get(..11) {
        let level = b[0] % 64;
        let index = u64::from_le_bytes(b[1..9].try_into().unwrap());
        let width = u16::from_le_bytes([b[9], b[10]]) % 256 + 1;
        let t = TileId {
            level,
            index,
            width,
        };
        assert_eq!(
            tiles::parse_tile_path(&t.path()).ok(),
            Some(ParsedPath::Tile(t))
        );
        let bundle = tiles::bundle_path(index, width);
        assert_eq!(
            tiles::parse_tile_path(&bundle).ok(),
            Some(ParsedPath::Bundle { index, width })
        );
    }
});
