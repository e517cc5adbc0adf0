//! The store (`004`): the run's virtual files. The engine keeps a working view of the store
//! ([`view::Store`]) and talks to the host's backend through [`Backend`], a few async methods
//! designed so a backend whose every operation is a round trip (IndexedDB, an edge KV) is not hit
//! once per Lua call: the listing is read once at start, file contents on first use, and changes
//! go out in ordered batches (docs/store.md).

pub mod claims;
pub mod path;
pub mod view;

use futures::future::LocalBoxFuture;
use std::cell::RefCell;
use std::collections::{BTreeMap, BTreeSet};

/// The eight store calls a prompt makes (`004`, "The calls").
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StoreOp {
    Write,
    Append,
    Read,
    ReadNumbered,
    StrReplace,
    Delete,
    Exists,
    Glob,
}

/// What a backend holds when the run starts.
#[derive(Debug, Clone, Default)]
pub struct Opened {
    /// Every file, with its contents when the backend has them at hand (`None`: fetched with
    /// [`Backend::read`] on first use).
    pub files: Vec<(String, Option<Vec<u8>>)>,
    /// Directories that hold no file (every parent of a file is a directory anyway).
    pub dirs: Vec<String>,
    pub read_only: bool,
}

/// One change, in the order the run made it. A batch is applied in order; a backend that cannot
/// apply a batch atomically must apply its changes in order, so that a crash leaves a prefix.
#[derive(Debug, Clone, PartialEq)]
pub enum Change {
    /// The file's complete new contents (writes, appends and edits all become whole-file writes:
    /// a file is never left torn).
    Write { path: String, data: Vec<u8> },
    /// Creates a directory (the parents of written files are implied and not sent).
    MakeDir { path: String },
    /// Removes a file or an empty directory.
    Delete { path: String },
}

impl Change {
    /// Bytes of file contents the change carries.
    pub fn size(&self) -> usize {
        match self {
            Change::Write { data, .. } => data.len(),
            _ => 0,
        }
    }
}

/// The host's store. Errors are texts for the run's `Vfs` error; they never reach Lua as is.
pub trait Backend {
    fn open(&self) -> LocalBoxFuture<'static, Result<Opened, String>>;
    /// A file's contents; `HostError::TooLarge` when the host refused them for the memory ceiling.
    fn read(&self, path: &str) -> LocalBoxFuture<'static, Result<Option<Vec<u8>>, crate::host::HostError>>;
    fn commit(&self, changes: Vec<Change>) -> LocalBoxFuture<'static, Result<(), String>>;
}

/// A store kept in memory: the default for a run, and the reference implementation of
/// [`Backend`] for tests.
#[derive(Debug, Default)]
pub struct MemoryBackend {
    state: RefCell<MemoryState>,
    read_only: bool,
}

#[derive(Debug, Default)]
struct MemoryState {
    files: BTreeMap<String, Vec<u8>>,
    dirs: BTreeSet<String>,
    /// Backend traffic, for tests and benchmarks: (opens, reads, commits, changes).
    calls: (usize, usize, usize, usize),
}

impl MemoryBackend {
    pub fn new(files: Vec<(String, Vec<u8>)>, read_only: bool) -> Self {
        MemoryBackend { state: RefCell::new(MemoryState { files: files.into_iter().collect(), ..Default::default() }), read_only }
    }

    /// Every file, sorted by path.
    pub fn snapshot(&self) -> Vec<(String, Vec<u8>)> {
        self.state.borrow().files.iter().map(|(k, v)| (k.clone(), v.clone())).collect()
    }

    /// (open calls, read calls, commit calls, changes committed).
    pub fn traffic(&self) -> (usize, usize, usize, usize) {
        self.state.borrow().calls
    }
}

impl Backend for MemoryBackend {
    fn open(&self) -> LocalBoxFuture<'static, Result<Opened, String>> {
        let mut s = self.state.borrow_mut();
        s.calls.0 += 1;
        let opened = Opened {
            files: s.files.iter().map(|(k, v)| (k.clone(), Some(v.clone()))).collect(),
            dirs: s.dirs.iter().cloned().collect(),
            read_only: self.read_only,
        };
        Box::pin(async move { Ok(opened) })
    }

    fn read(&self, path: &str) -> LocalBoxFuture<'static, Result<Option<Vec<u8>>, crate::host::HostError>> {
        let mut s = self.state.borrow_mut();
        s.calls.1 += 1;
        let data = s.files.get(path).cloned();
        Box::pin(async move { Ok(data) })
    }

    fn commit(&self, changes: Vec<Change>) -> LocalBoxFuture<'static, Result<(), String>> {
        let mut s = self.state.borrow_mut();
        s.calls.2 += 1;
        s.calls.3 += changes.len();
        for change in changes {
            match change {
                Change::Write { path, data } => {
                    s.files.insert(path, data);
                }
                Change::MakeDir { path } => {
                    s.dirs.insert(path);
                }
                Change::Delete { path } => {
                    s.files.remove(&path);
                    s.dirs.remove(&path);
                }
            }
        }
        Box::pin(async { Ok(()) })
    }
}
