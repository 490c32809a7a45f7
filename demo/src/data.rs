//! The demo's data directory: a fresh one each time, marked as the demo's so a later demo may
//! wipe it (and nothing else), and removed when it was a temporary one.

use std::path::{Path, PathBuf};

use crate::DemoError;

/// Marks a data directory as the demo's, so a later demo may wipe it (and nothing else).
pub const MARKER: &str = ".toolmark-demo";

/// The demo's data directory, fresh; a temporary one is removed when this is dropped.
#[derive(Debug)]
pub struct DemoData {
    path: PathBuf,
    temporary: bool,
}

fn io<'a>(what: &'static str, path: &'a Path) -> impl FnOnce(std::io::Error) -> DemoError + 'a {
    move |reason| DemoError::Io {
        what,
        path: path.to_owned(),
        reason,
    }
}

impl DemoData {
    /// `dir` (an empty or new directory, or one an earlier demo used: it is wiped), or a new
    /// temporary directory when `None`; marked with [`MARKER`].
    pub fn prepare(dir: Option<&Path>) -> Result<DemoData, DemoError> {
        let (path, temporary) = match dir {
            Some(d) => (d.to_owned(), false),
            None => (
                std::env::temp_dir().join(format!("toolmark-demo-{}", std::process::id())),
                true,
            ),
        };
        if path.exists() {
            let empty = std::fs::read_dir(&path)
                .map_err(io("reading", &path))?
                .next()
                .is_none();
            if !empty && !path.join(MARKER).exists() {
                return Err(DemoError::NotDemoData(path));
            }
            if !empty {
                std::fs::remove_dir_all(&path).map_err(io("wiping", &path))?;
            }
        }
        std::fs::create_dir_all(&path).map_err(io("creating", &path))?;
        std::fs::write(
            path.join(MARKER),
            "data of toolmark demo: the next demo may wipe it\n",
        )
        .map_err(io("writing", &path))?;
        Ok(DemoData { path, temporary })
    }

    /// Where it is.
    pub fn path(&self) -> &Path {
        &self.path
    }
}

impl Drop for DemoData {
    fn drop(&mut self) {
        if self.temporary {
            let _ = std::fs::remove_dir_all(&self.path);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scratch(name: &str) -> PathBuf {
        let dir =
            std::env::temp_dir().join(format!("toolmark-demo-data-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        dir
    }

    #[test]
    fn an_earlier_demos_directory_is_wiped_and_marked() {
        let dir = scratch("earlier");
        drop(DemoData::prepare(Some(&dir)).unwrap());
        std::fs::write(dir.join("index.sqlite"), "old").unwrap();
        let data = DemoData::prepare(Some(&dir)).unwrap();
        assert!(!dir.join("index.sqlite").exists());
        assert!(dir.join(MARKER).exists());
        drop(data);
        // A directory given by name is kept at exit.
        assert!(dir.exists());
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn a_foreign_directory_is_refused_untouched() {
        let dir = scratch("foreign");
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join("precious"), "keep").unwrap();
        let e = DemoData::prepare(Some(&dir)).unwrap_err();
        assert!(matches!(e, DemoError::NotDemoData(_)), "{e}");
        assert!(dir.join("precious").exists());
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn a_temporary_directory_is_removed_when_dropped() {
        let data = DemoData::prepare(None).unwrap();
        let path = data.path().to_owned();
        assert!(path.join(MARKER).exists());
        drop(data);
        assert!(!path.exists());
    }
}
