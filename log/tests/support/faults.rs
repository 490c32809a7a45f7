//! Fault injection around the real stores: one write fails once, either lost (it did not
//! happen) or persisted (it happened, and the caller is told it failed).

use async_trait::async_trait;
use futures_util::stream::BoxStream;
use object_store::path::Path;
use object_store::{
    CopyOptions, GetOptions, GetResult, ListResult, MultipartUpload, ObjectMeta, ObjectStore,
    PutMultipartOptions, PutOptions, PutPayload, PutResult,
};
use std::sync::{Arc, Mutex};
use std::time::Duration;
use toolmark_log::Hash;
use toolmark_log::head::{DedupKey, HeadStore};
use toolmark_log::store::{Head, StoreError};

/// How an injected failure behaves.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    /// The write did not happen, and the caller is told it failed.
    Lost,
    /// The write happened, but the caller is told it failed.
    Persisted,
}

/// One failure to inject, then none.
#[derive(Debug)]
pub struct Arm {
    /// What the failing write's object path contains (`staging/`, `tile/`, `checkpoint`), or
    /// the head store's call (`head:commit`, `head:set_applied`).
    pub at: &'static str,
    pub mode: Mode,
    /// Matching writes to let through first.
    pub skip: usize,
}

fn take(arm: &Mutex<Option<Arm>>, what: &str) -> Option<Mode> {
    let mut a = arm.lock().unwrap();
    let hit = a.as_ref().is_some_and(|a| what.contains(a.at));
    if !hit {
        return None;
    }
    let armed = a.as_mut().unwrap();
    if armed.skip > 0 {
        armed.skip -= 1;
        return None;
    }
    a.take().map(|a| a.mode)
}

/// An object store that fails one matching `put` once.
#[derive(Debug)]
pub struct FaultyObjects {
    pub inner: Arc<dyn ObjectStore>,
    pub arm: Arc<Mutex<Option<Arm>>>,
}

impl std::fmt::Display for FaultyObjects {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "faulty({})", self.inner)
    }
}

fn injected() -> object_store::Error {
    object_store::Error::Generic {
        store: "faulty",
        source: "injected fault".into(),
    }
}

#[async_trait]
impl ObjectStore for FaultyObjects {
    async fn put_opts(
        &self,
        location: &Path,
        payload: PutPayload,
        opts: PutOptions,
    ) -> object_store::Result<PutResult> {
        match take(&self.arm, location.as_ref()) {
            None => self.inner.put_opts(location, payload, opts).await,
            Some(Mode::Lost) => Err(injected()),
            Some(Mode::Persisted) => {
                self.inner.put_opts(location, payload, opts).await?;
                Err(injected())
            }
        }
    }
    async fn put_multipart_opts(
        &self,
        location: &Path,
        opts: PutMultipartOptions,
    ) -> object_store::Result<Box<dyn MultipartUpload>> {
        self.inner.put_multipart_opts(location, opts).await
    }
    async fn get_opts(
        &self,
        location: &Path,
        options: GetOptions,
    ) -> object_store::Result<GetResult> {
        self.inner.get_opts(location, options).await
    }
    fn delete_stream(
        &self,
        locations: BoxStream<'static, object_store::Result<Path>>,
    ) -> BoxStream<'static, object_store::Result<Path>> {
        self.inner.delete_stream(locations)
    }
    fn list(&self, prefix: Option<&Path>) -> BoxStream<'static, object_store::Result<ObjectMeta>> {
        self.inner.list(prefix)
    }
    async fn list_with_delimiter(
        &self,
        prefix: Option<&Path>,
    ) -> object_store::Result<ListResult> {
        self.inner.list_with_delimiter(prefix).await
    }
    async fn copy_opts(
        &self,
        from: &Path,
        to: &Path,
        options: CopyOptions,
    ) -> object_store::Result<()> {
        self.inner.copy_opts(from, to, options).await
    }
}

/// A head store that fails one `commit` or `set_applied` once.
pub struct FaultyHead {
    pub inner: Box<dyn HeadStore>,
    pub arm: Arc<Mutex<Option<Arm>>>,
}

impl FaultyHead {
    fn hit<T>(
        &mut self,
        what: &'static str,
        op: impl FnOnce(&mut dyn HeadStore) -> Result<T, StoreError>,
    ) -> Result<T, StoreError> {
        match take(&self.arm, what) {
            None => op(self.inner.as_mut()),
            Some(Mode::Lost) => Err(StoreError::Injected(what)),
            Some(Mode::Persisted) => {
                op(self.inner.as_mut())?;
                Err(StoreError::Injected(what))
            }
        }
    }
}

impl HeadStore for FaultyHead {
    fn head(&mut self) -> Result<Option<Head>, StoreError> {
        self.inner.head()
    }
    fn checkpoint_at(&mut self, size: u64) -> Result<Option<Head>, StoreError> {
        self.inner.checkpoint_at(size)
    }
    fn commit(
        &mut self,
        expected: Option<(u64, Hash)>,
        new: &Head,
        subjects: &[(String, u64)],
        keys: &[(DedupKey, u64)],
    ) -> Result<(), StoreError> {
        self.hit("head:commit", |s| s.commit(expected, new, subjects, keys))
    }
    fn subjects_last(&mut self, ids: &[String]) -> Result<Vec<(String, u64)>, StoreError> {
        self.inner.subjects_last(ids)
    }
    fn logged(&mut self, keys: &[DedupKey]) -> Result<Vec<(DedupKey, u64)>, StoreError> {
        self.inner.logged(keys)
    }
    fn applied(&mut self) -> Result<Option<(u64, Hash)>, StoreError> {
        self.inner.applied()
    }
    fn set_applied(&mut self, size: u64, root: Hash) -> Result<(), StoreError> {
        self.hit("head:set_applied", |s| s.set_applied(size, root))
    }
    fn meta(&mut self, key: &str) -> Result<Option<String>, StoreError> {
        self.inner.meta(key)
    }
    fn set_meta(&mut self, key: &str, value: Option<&str>) -> Result<(), StoreError> {
        self.inner.set_meta(key, value)
    }
    fn try_lease(&mut self, holder: &str, ttl: Duration) -> Result<bool, StoreError> {
        self.inner.try_lease(holder, ttl)
    }
    fn release_lease(&mut self, holder: &str) -> Result<(), StoreError> {
        self.inner.release_lease(holder)
    }
    fn describe(&self) -> String {
        format!("faulty({})", self.inner.describe())
    }
}
