//! The decoy HOME as a second witness of persistence: a manifest of its
//! [`PERSISTENCE_PATHS`] entries (kind, mode, size, modification time, a digest of the first
//! [`MAX_WITNESS_FILE_BYTES`], a link's target) taken on the host before and after each
//! sandbox, compared. A persistence path that appeared or changed is persistence even when the
//! trace did not show the call that made it (a call not traced, a trace line lost).
//!
//! The HOME is the package's to fill, so reading it is hostile input: nothing is followed (a
//! symbolic link is read as a link, never opened), only regular files are opened (`O_NOFOLLOW`,
//! `O_NONBLOCK`: a FIFO planted at `.bashrc` cannot stall the observer), at most
//! [`MAX_WITNESS_FILE_BYTES`] of each and [`MAX_WITNESS_BYTES`] in all are read, and at most
//! [`MAX_WITNESS_ENTRIES`] entries are kept (the rest: [`Manifest::cut`], the phase
//! incomplete).

use std::collections::BTreeMap;
use std::io::Read;
use std::os::unix::fs::{MetadataExt, OpenOptionsExt};
use std::path::{Path, PathBuf};

use crate::behaviour::{PERSISTENCE_PATHS, persistence_rel};

/// Most entries (files, directories, links) a manifest of the persistence paths keeps.
pub const MAX_WITNESS_ENTRIES: usize = 10_000;
/// Most bytes of one file read into its digest (its size and time are kept whole).
pub const MAX_WITNESS_FILE_BYTES: u64 = 1024 * 1024;
/// Most bytes read into digests for one manifest (more: [`Manifest::cut`]).
pub const MAX_WITNESS_BYTES: u64 = 64 * 1024 * 1024;

/// What one entry was.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Entry {
    /// `file`, `dir`, `link` or `other` (a FIFO, a socket, a device).
    kind: &'static str,
    mode: u32,
    size: u64,
    mtime: (i64, i64),
    /// The first [`MAX_WITNESS_FILE_BYTES`]' digest (files), the target (links).
    content: String,
}

/// The persistence paths of one HOME at one moment, by path relative to it.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Manifest {
    entries: BTreeMap<String, Entry>,
    /// More than [`MAX_WITNESS_ENTRIES`] entries, or [`MAX_WITNESS_BYTES`] read: the rest
    /// were not looked at.
    pub cut: bool,
}

impl Manifest {
    /// The manifest of `home`'s persistence paths (a directory entry with everything under
    /// it, walked without recursion: a tree of any depth cannot exhaust the observer's stack);
    /// what cannot be read is left out.
    pub fn take(home: &Path) -> Manifest {
        let mut m = Manifest::default();
        let mut budget = MAX_WITNESS_BYTES;
        // Paths relative to HOME still to look at: (the name as kept, the path as it is on
        // disk — a name that is not UTF-8 is still looked at, under its lossy form).
        let mut todo: Vec<(String, PathBuf)> = PERSISTENCE_PATHS
            .iter()
            .rev()
            .map(|p| {
                let rel = p.trim_end_matches('/');
                (rel.to_owned(), home.join(rel))
            })
            .collect();
        while let Some((rel, path)) = todo.pop() {
            if m.entries.contains_key(&rel) {
                continue;
            }
            if m.entries.len() >= MAX_WITNESS_ENTRIES {
                m.cut = true;
                break;
            }
            let Ok(meta) = std::fs::symlink_metadata(&path) else {
                continue;
            };
            let kind = meta.file_type();
            let (kind_name, content) = if kind.is_symlink() {
                let target = std::fs::read_link(&path).unwrap_or_default();
                ("link", target.to_string_lossy().into_owned())
            } else if kind.is_file() {
                let limit = budget.min(MAX_WITNESS_FILE_BYTES);
                let (hex, read) = digest(&path, limit).unwrap_or_default();
                budget -= read;
                if read == limit && meta.size() > read && limit < MAX_WITNESS_FILE_BYTES {
                    // The budget ran out inside this file: what follows was not compared.
                    m.cut = true;
                }
                ("file", hex)
            } else if kind.is_dir() {
                ("dir", String::new())
            } else {
                ("other", String::new())
            };
            m.entries.insert(
                rel.clone(),
                Entry {
                    kind: kind_name,
                    mode: meta.mode(),
                    size: meta.size(),
                    mtime: (meta.mtime(), meta.mtime_nsec()),
                    content,
                },
            );
            if kind.is_dir() {
                let Ok(children) = std::fs::read_dir(&path) else {
                    continue;
                };
                let mut names: Vec<std::ffi::OsString> = children
                    .filter_map(Result::ok)
                    .map(|c| c.file_name())
                    .take(MAX_WITNESS_ENTRIES + 1)
                    .collect();
                names.sort();
                for name in names.into_iter().rev() {
                    let child = format!("{rel}/{}", name.to_string_lossy());
                    todo.push((child, path.join(name)));
                }
            }
        }
        m
    }

    /// What changed from `self` to `after`: each persistence path that appeared (`created`)
    /// or changed (`changed`: kind, mode, size, time, content or target), relative to HOME, in
    /// order. A path that went away is not persistence.
    pub fn changes(&self, after: &Manifest) -> Vec<(String, &'static str)> {
        after
            .entries
            .iter()
            .filter(|(rel, _)| persistence_rel(rel))
            .filter_map(|(rel, entry)| match self.entries.get(rel) {
                None => Some((rel.clone(), "created")),
                Some(before) if before != entry => Some((rel.clone(), "changed")),
                Some(_) => None,
            })
            .collect()
    }
}

/// The digest of a regular file's first `limit` bytes, and how many were read, opened without
/// following a link or waiting on a FIFO (`None`: not a regular file when opened, or
/// unreadable).
fn digest(path: &Path, limit: u64) -> Option<(String, u64)> {
    let file = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags((rustix::fs::OFlags::NOFOLLOW | rustix::fs::OFlags::NONBLOCK).bits() as i32)
        .open(path)
        .ok()?;
    if !file.metadata().ok()?.is_file() {
        return None;
    }
    let mut bytes = Vec::new();
    file.take(limit).read_to_end(&mut bytes).ok()?;
    Some((toolmark_toolset::Sri::of(&bytes).hex(), bytes.len() as u64))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn home(name: &str) -> std::path::PathBuf {
        let dir = std::env::temp_dir().join(format!("toolmark-home-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(dir.join(".ssh")).unwrap();
        std::fs::write(dir.join(".bashrc"), "# decoy\n").unwrap();
        std::fs::write(dir.join(".ssh/id_rsa"), "key").unwrap();
        dir
    }

    #[test]
    fn a_persistence_path_that_appears_or_changes_is_seen_and_nothing_else() {
        let dir = home("changes");
        let before = Manifest::take(&dir);
        std::fs::write(dir.join(".bashrc"), "# decoy\ncurl x | sh\n").unwrap();
        std::fs::write(dir.join(".ssh/authorized_keys"), "ssh-ed25519 AAAA").unwrap();
        std::fs::create_dir_all(dir.join(".config/autostart")).unwrap();
        std::fs::create_dir_all(dir.join(".config/systemd/user")).unwrap();
        std::os::unix::fs::symlink("/tmp/x", dir.join(".profile")).unwrap();
        // Not persistence paths.
        std::fs::write(dir.join(".ssh/id_rsa"), "other").unwrap();
        std::fs::write(dir.join("notes.txt"), "x").unwrap();
        let after = Manifest::take(&dir);
        assert!(!after.cut);
        assert_eq!(
            before.changes(&after),
            [
                (".bashrc".to_owned(), "changed"),
                (".config/autostart".to_owned(), "created"),
                (".config/systemd/user".to_owned(), "created"),
                (".profile".to_owned(), "created"),
                (".ssh/authorized_keys".to_owned(), "created"),
            ]
        );
        assert!(after.changes(&Manifest::take(&dir)).is_empty(), "unchanged");
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn a_fifo_or_a_link_at_a_persistence_path_is_read_as_what_it_is_never_opened() {
        let dir = home("fifo");
        let before = Manifest::take(&dir);
        std::fs::remove_file(dir.join(".bashrc")).unwrap();
        rustix::fs::mknodat(
            rustix::fs::CWD,
            dir.join(".bashrc"),
            rustix::fs::FileType::Fifo,
            rustix::fs::Mode::from_raw_mode(0o644),
            0,
        )
        .unwrap();
        // A link to a file outside HOME: its target is kept, the file is not read.
        std::os::unix::fs::symlink("/etc/shadow", dir.join(".zshrc")).unwrap();
        let after = Manifest::take(&dir);
        assert_eq!(
            before.changes(&after),
            [
                (".bashrc".to_owned(), "changed"),
                (".zshrc".to_owned(), "created")
            ]
        );
        assert_eq!(after.entries[".bashrc"].kind, "other");
        assert_eq!(after.entries[".zshrc"].content, "/etc/shadow");
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn a_persistence_directory_with_too_many_entries_is_cut_not_read_whole() {
        let dir = home("many");
        let autostart = dir.join(".config/autostart");
        std::fs::create_dir_all(&autostart).unwrap();
        for i in 0..MAX_WITNESS_ENTRIES + 5 {
            std::fs::write(autostart.join(i.to_string()), "").unwrap();
        }
        let m = Manifest::take(&dir);
        assert!(m.cut);
        assert_eq!(m.entries.len(), MAX_WITNESS_ENTRIES);
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn a_deep_tree_or_a_name_that_is_not_utf8_does_not_hide_or_stall_anything() {
        use std::os::unix::ffi::OsStrExt;
        let dir = home("deep");
        let before = Manifest::take(&dir);
        let autostart = dir.join(".config/autostart");
        std::fs::create_dir_all(&autostart).unwrap();
        std::fs::write(
            autostart.join(std::ffi::OsStr::from_bytes(b"x\xff.desktop")),
            "",
        )
        .unwrap();
        // A tree 201 levels deep (walked without recursion; each level one entry).
        let mut deep = autostart.join("d");
        for _ in 0..200 {
            deep = deep.join("d");
        }
        std::fs::create_dir_all(&deep).unwrap();
        let after = Manifest::take(&dir);
        let changes = before.changes(&after);
        assert!(
            changes.contains(&(".config/autostart/x\u{fffd}.desktop".to_owned(), "created")),
            "{changes:?}"
        );
        assert_eq!(
            changes.len(),
            1 + 1 + 201,
            "the directory, the file, each level"
        );
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn more_bytes_than_a_manifest_digests_make_it_cut() {
        let dir = home("bytes");
        let autostart = dir.join(".config/autostart");
        std::fs::create_dir_all(&autostart).unwrap();
        let mib = vec![b'x'; MAX_WITNESS_FILE_BYTES as usize];
        let files = MAX_WITNESS_BYTES / MAX_WITNESS_FILE_BYTES;
        // Within the budget (`.bashrc` is read too).
        for i in 1..files {
            std::fs::write(autostart.join(i.to_string()), &mib).unwrap();
        }
        assert!(!Manifest::take(&dir).cut);
        std::fs::write(autostart.join("more"), &mib).unwrap();
        assert!(Manifest::take(&dir).cut);
        let _ = std::fs::remove_dir_all(&dir);
    }
}
