//! The decoy HOME as a second witness of persistence: a manifest of its
//! [`PERSISTENCE_PATHS`] entries (kind, mode, size, inode, modification and change times, a
//! digest of the first [`MAX_WITNESS_FILE_BYTES`], a link's target) taken on the host before
//! and after each sandbox, compared. A persistence path that appeared or changed is
//! persistence even when the trace did not show the call that made it (a call not traced, a
//! trace line lost). The change time and inode are kept because the modification time can be
//! set back (`utimensat`) and only the first [`MAX_WITNESS_FILE_BYTES`] of a file are digested:
//! a file rewritten past them, or replaced, with its old time put back, still differs.
//!
//! The HOME is the package's to fill, so reading it is hostile input, and the observer reads
//! it as root: nothing is followed. Every name is opened from a descriptor of HOME with
//! `openat2(RESOLVE_NO_SYMLINKS | RESOLVE_BENEATH, O_NOFOLLOW)`, so a symbolic link anywhere
//! on the way — `~/.ssh` or `~/.config` made a link to a staged directory, or to `/etc` — is
//! read as a link and never walked through (the parent directory of a persistence path that
//! is a link is kept as an entry: [`Manifest::changes`] says `symlinked`); only regular files
//! are opened for reading (`O_NONBLOCK`: a FIFO planted at `.bashrc` cannot stall the
//! observer), at most [`MAX_WITNESS_FILE_BYTES`] of each and [`MAX_WITNESS_BYTES`] in all are
//! read, and at most [`MAX_WITNESS_ENTRIES`] entries are kept (the rest: [`Manifest::cut`], the
//! phase incomplete). A name that cannot be opened that way (a path longer than the kernel
//! walks) is not looked at, and the manifest is cut.

use std::collections::BTreeMap;
use std::io::Read;
use std::os::fd::OwnedFd;
use std::path::Path;

use std::os::unix::fs::MetadataExt;

use rustix::fs::{Mode, OFlags, ResolveFlags};

use crate::behaviour::{PERSISTENCE_PATHS, persistence_parent, persistence_rel};

/// Most entries (files, directories, links) a manifest of the persistence paths keeps.
pub const MAX_WITNESS_ENTRIES: usize = 10_000;
/// Most bytes of one file read into its digest (its size and times are kept whole).
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
    /// The inode: a file replaced by another (a rename onto it) is another inode.
    ino: u64,
    mtime: (i64, i64),
    /// The change time, which no call of the package can set back.
    ctime: (i64, i64),
    /// The first [`MAX_WITNESS_FILE_BYTES`]' digest (files), the target (links).
    content: String,
}

/// The persistence paths of one HOME at one moment, by path relative to it.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Manifest {
    entries: BTreeMap<String, Entry>,
    /// More than [`MAX_WITNESS_ENTRIES`] entries, or [`MAX_WITNESS_BYTES`] read, or a name
    /// that could not be opened: the rest were not looked at.
    pub cut: bool,
}

/// How every name under HOME is resolved: no symbolic link on the way (`ELOOP` instead), and
/// never above HOME.
fn resolve() -> ResolveFlags {
    ResolveFlags::NO_SYMLINKS | ResolveFlags::BENEATH
}

/// `rel` (a path relative to HOME, as bytes) opened from `home` with `flags`, nothing followed.
fn open_beneath(home: &OwnedFd, rel: &[u8], flags: OFlags) -> rustix::io::Result<OwnedFd> {
    rustix::fs::openat2(
        home,
        rel,
        flags | OFlags::NOFOLLOW | OFlags::CLOEXEC,
        Mode::empty(),
        resolve(),
    )
}

impl Manifest {
    /// The manifest of `home`'s persistence paths (a directory entry with everything under
    /// it, walked without recursion: a tree of any depth cannot exhaust the observer's stack);
    /// a parent directory of a persistence path that is a symbolic link is kept as that link
    /// (and nothing under it is looked at); what does not exist is left out.
    pub fn take(home: &Path) -> Manifest {
        let mut m = Manifest::default();
        let Ok(home) = rustix::fs::open(
            home,
            OFlags::PATH | OFlags::DIRECTORY | OFlags::CLOEXEC,
            Mode::empty(),
        ) else {
            m.cut = true;
            return m;
        };
        let mut budget = MAX_WITNESS_BYTES;
        // Paths relative to HOME still to look at: (the name as kept, the name as it is on
        // disk — a name that is not UTF-8 is still looked at, under its lossy form).
        let mut todo: Vec<(String, Vec<u8>)> = Vec::new();
        for p in PERSISTENCE_PATHS.iter().rev() {
            let rel = p.trim_end_matches('/');
            // Each directory on the way: a link there is what a program would walk through.
            let mut walkable = true;
            for (i, _) in rel.match_indices('/') {
                let parent = &rel[..i];
                match m.look(&home, parent, parent.as_bytes(), &mut budget) {
                    Some("dir") => {}
                    _ => {
                        walkable = false;
                        break;
                    }
                }
            }
            if walkable {
                todo.push((rel.to_owned(), rel.as_bytes().to_vec()));
            }
        }
        // The parents looked at above are kept only when they are links (`changes`).
        m.entries
            .retain(|rel, e| persistence_rel(rel) || e.kind == "link");
        while let Some((rel, raw)) = todo.pop() {
            if m.entries.contains_key(&rel) {
                continue;
            }
            if m.entries.len() >= MAX_WITNESS_ENTRIES {
                m.cut = true;
                break;
            }
            if m.look(&home, &rel, &raw, &mut budget) != Some("dir") {
                continue;
            }
            let Ok(dir) = open_beneath(&home, &raw, OFlags::RDONLY | OFlags::DIRECTORY) else {
                m.cut = true;
                continue;
            };
            let Ok(mut dir) = rustix::fs::Dir::new(dir) else {
                continue;
            };
            let mut names: Vec<Vec<u8>> = Vec::new();
            while let Some(Ok(entry)) = dir.read() {
                let name = entry.file_name().to_bytes();
                if name == b"." || name == b".." {
                    continue;
                }
                names.push(name.to_vec());
                if names.len() > MAX_WITNESS_ENTRIES {
                    break;
                }
            }
            names.sort();
            for name in names.into_iter().rev() {
                let child = format!("{rel}/{}", String::from_utf8_lossy(&name));
                let mut path = raw.clone();
                path.push(b'/');
                path.extend_from_slice(&name);
                todo.push((child, path));
            }
        }
        m
    }

    /// Look at one name (`raw` on disk, kept as `rel`) and keep its entry; its kind (`None`:
    /// it is not there). A name that exists but cannot be opened without following a link
    /// on the way makes the manifest cut.
    fn look(
        &mut self,
        home: &OwnedFd,
        rel: &str,
        raw: &[u8],
        budget: &mut u64,
    ) -> Option<&'static str> {
        let fd = match open_beneath(home, raw, OFlags::PATH) {
            Ok(fd) => fd,
            Err(rustix::io::Errno::NOENT | rustix::io::Errno::NOTDIR) => return None,
            Err(_) => {
                // A link on the way that appeared since its parent was read, or a name longer
                // than the kernel walks: not looked at, and said so.
                self.cut = true;
                return None;
            }
        };
        // An `O_PATH` descriptor: `fstat` and `readlinkat` work on it, reading does not.
        let fd = std::fs::File::from(fd);
        let meta = fd.metadata().ok()?;
        let kind = meta.file_type();
        let (name, content) = if kind.is_symlink() {
            let target = rustix::fs::readlinkat(&fd, "", Vec::new()).unwrap_or_default();
            (
                "link",
                String::from_utf8_lossy(target.to_bytes()).into_owned(),
            )
        } else if kind.is_file() {
            let limit = (*budget).min(MAX_WITNESS_FILE_BYTES);
            let (hex, read) = digest(home, raw, meta.ino(), limit).unwrap_or_default();
            *budget -= read;
            if read == limit && meta.size() > read && limit < MAX_WITNESS_FILE_BYTES {
                // The budget ran out inside this file: what follows was not compared.
                self.cut = true;
            }
            ("file", hex)
        } else if kind.is_dir() {
            ("dir", String::new())
        } else {
            ("other", String::new())
        };
        self.entries.insert(
            rel.to_owned(),
            Entry {
                kind: name,
                mode: meta.mode(),
                size: meta.size(),
                ino: meta.ino(),
                mtime: (meta.mtime(), meta.mtime_nsec()),
                ctime: (meta.ctime(), meta.ctime_nsec()),
                content,
            },
        );
        Some(name)
    }

    /// What changed from `self` to `after`: each persistence path that appeared (`created`)
    /// or changed (`changed`: kind, mode, size, inode, times, content or target), and each
    /// parent directory of one that became a symbolic link or now names another target
    /// (`symlinked`: a program walking to the persistence path goes where it points),
    /// relative to HOME, in order. A path that went away is not persistence.
    pub fn changes(&self, after: &Manifest) -> Vec<(String, &'static str)> {
        after
            .entries
            .iter()
            .filter_map(|(rel, entry)| {
                let before = self.entries.get(rel);
                if persistence_rel(rel) {
                    match before {
                        None => Some((rel.clone(), "created")),
                        Some(before) if before != entry => Some((rel.clone(), "changed")),
                        Some(_) => None,
                    }
                } else {
                    let moved =
                        before.is_none_or(|b| b.kind != "link" || b.content != entry.content);
                    (entry.kind == "link" && persistence_parent(rel) && moved)
                        .then(|| (rel.clone(), "symlinked"))
                }
            })
            .collect()
    }
}

/// The digest of the regular file `rel` (opened from `home`, nothing followed, without waiting
/// on a FIFO) whose inode is `ino`: its first `limit` bytes, and how many were read (`None`:
/// not that regular file when opened, or unreadable).
fn digest(home: &OwnedFd, rel: &[u8], ino: u64, limit: u64) -> Option<(String, u64)> {
    let file =
        std::fs::File::from(open_beneath(home, rel, OFlags::RDONLY | OFlags::NONBLOCK).ok()?);
    let meta = file.metadata().ok()?;
    if !meta.is_file() || meta.ino() != ino {
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
    fn a_directory_on_the_way_made_a_link_is_a_change_and_is_never_walked() {
        let dir = home("symlinked");
        std::fs::create_dir_all(dir.join(".config")).unwrap();
        let before = Manifest::take(&dir);
        // `~/.ssh` moved away, an `authorized_keys` staged, `~/.ssh` made a link to it by the
        // path it has inside the sandbox (nothing there on the host).
        std::fs::rename(dir.join(".ssh"), dir.join(".cache-old")).unwrap();
        std::fs::create_dir_all(dir.join(".cache/s")).unwrap();
        std::fs::write(dir.join(".cache/s/authorized_keys"), "ssh-ed25519 AAAA").unwrap();
        std::os::unix::fs::symlink("/home/decoy/.cache/s", dir.join(".ssh")).unwrap();
        // `~/.config` made a link to a tree outside HOME holding an autostart entry: on the
        // host, as root, it must not be walked (it could be `/etc`).
        let outside = dir.with_extension("outside");
        let _ = std::fs::remove_dir_all(&outside);
        std::fs::create_dir_all(outside.join("autostart")).unwrap();
        std::fs::write(outside.join("autostart/x.desktop"), "[Desktop Entry]").unwrap();
        std::fs::remove_dir(dir.join(".config")).unwrap();
        std::os::unix::fs::symlink(&outside, dir.join(".config")).unwrap();
        let after = Manifest::take(&dir);
        assert!(!after.cut);
        assert_eq!(
            before.changes(&after),
            [
                (".config".to_owned(), "symlinked"),
                (".ssh".to_owned(), "symlinked"),
            ]
        );
        assert!(
            after.entries.keys().all(|k| !k.starts_with(".config/")),
            "nothing read through the link: {:?}",
            after.entries.keys().collect::<Vec<_>>()
        );
        assert_eq!(after.entries[".ssh"].content, "/home/decoy/.cache/s");
        // The same links a moment later: no change; pointed elsewhere: a change again.
        assert!(after.changes(&Manifest::take(&dir)).is_empty());
        std::fs::remove_file(dir.join(".ssh")).unwrap();
        std::os::unix::fs::symlink("/tmp", dir.join(".ssh")).unwrap();
        assert_eq!(
            after.changes(&Manifest::take(&dir)),
            [(".ssh".to_owned(), "symlinked")]
        );
        // A link elsewhere in HOME, on no persistence path's way, is nothing.
        std::os::unix::fs::symlink("/etc", dir.join(".cache/etc")).unwrap();
        assert_eq!(Manifest::take(&dir).entries.len(), after.entries.len());
        let _ = std::fs::remove_dir_all(&dir);
        let _ = std::fs::remove_dir_all(&outside);
    }

    #[test]
    fn a_file_changed_with_its_modification_time_put_back_is_still_changed() {
        let dir = home("times");
        // Larger than what is digested: past the first MiB only the metadata tells.
        let mut big = vec![b'#'; MAX_WITNESS_FILE_BYTES as usize + 4096];
        std::fs::write(dir.join(".bashrc"), &big).unwrap();
        std::fs::write(dir.join(".zshrc"), "# decoy\n").unwrap();
        let before = Manifest::take(&dir);
        let mtime = |path: &Path| std::fs::metadata(path).unwrap().modified().unwrap();
        let (rc, zrc) = (dir.join(".bashrc"), dir.join(".zshrc"));
        let (rc_time, zrc_time) = (mtime(&rc), mtime(&zrc));
        // Past the kernel clock's coarse tick, so that the change time moves.
        std::thread::sleep(std::time::Duration::from_millis(20));
        // `.bashrc` rewritten past its first MiB, same size, its time set back (`utimensat`).
        let last = big.len() - 1;
        big[last] = b'\n';
        std::fs::write(&rc, &big).unwrap();
        std::fs::File::options()
            .write(true)
            .open(&rc)
            .unwrap()
            .set_modified(rc_time)
            .unwrap();
        // `.zshrc` replaced by another file with the same bytes and time (a rename onto it).
        std::fs::write(dir.join(".z"), "# decoy\n").unwrap();
        std::fs::File::options()
            .write(true)
            .open(dir.join(".z"))
            .unwrap()
            .set_modified(zrc_time)
            .unwrap();
        std::fs::rename(dir.join(".z"), &zrc).unwrap();
        assert_eq!((mtime(&rc), mtime(&zrc)), (rc_time, zrc_time));
        let after = Manifest::take(&dir);
        assert_eq!(
            before.changes(&after),
            [
                (".bashrc".to_owned(), "changed"),
                (".zshrc".to_owned(), "changed")
            ]
        );
        assert_ne!(before.entries[".zshrc"].ino, after.entries[".zshrc"].ino);
        assert_ne!(
            before.entries[".bashrc"].ctime,
            after.entries[".bashrc"].ctime
        );
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
