//! The run's working view of the store and the eight store calls (`004`). Reads are served from
//! what the view holds (contents fetched from the backend once, on first use); changes are
//! applied to the view at once and queued, in order, for the backend.

use std::cell::RefCell;
use std::collections::{BTreeMap, BTreeSet};
use std::rc::Rc;

use super::claims::{Accessor, Claims, Region};
use super::path::{self, Rule};
use super::{Backend, Change};

/// A failed store call: an error value of kind `store` with these fields.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct StoreError {
    pub reason: &'static str,
    pub message: String,
    pub path: Option<String>,
    pub rule: Option<&'static str>,
    pub anchor: Option<String>,
    pub count: Option<i64>,
}

/// A store call that cannot go on: an error for the caller, or a conflict that ends the run.
#[derive(Debug, Clone, PartialEq)]
pub enum Failure {
    Store(StoreError),
    /// A claims conflict: run error `Determinism`, never catchable.
    Conflict(String),
    /// The backend failed: run error `Vfs`.
    Backend(String),
    /// The host refused a file of this many bytes for the memory ceiling: run error `Limit`.
    TooLarge(u64),
}

impl From<StoreError> for Failure {
    fn from(e: StoreError) -> Self {
        Failure::Store(e)
    }
}

fn err(reason: &'static str, message: String, path: &str) -> StoreError {
    StoreError { reason, message, path: Some(path.to_string()), ..Default::default() }
}

pub fn not_found(path: &str) -> StoreError {
    err("not_found", format!("file not found in store: {path}"), path)
}

fn invalid_path(p: &str, rule: Rule) -> StoreError {
    StoreError { rule: Some(rule.tag()), ..err("invalid_path", format!("invalid path {p:?}: {}", rule.path_reason()), p) }
}

fn invalid_range(p: &str, reason: &str) -> StoreError {
    err("invalid_range", format!("invalid line range for {p}: {reason}"), p)
}

pub fn check(p: &str) -> Result<(), StoreError> {
    path::check_path(p).map_err(|rule| invalid_path(p, rule))
}

/// A file's contents known to be UTF-8: the view's own bytes, shared rather than copied (a file may
/// be large).
#[derive(Debug, Clone, PartialEq)]
pub struct Text(Rc<Vec<u8>>);

impl Text {
    pub fn as_bytes(&self) -> &[u8] {
        &self.0
    }

    pub fn as_str(&self) -> &str {
        // Checked when made (`Store::text`), so never the empty fallback.
        std::str::from_utf8(&self.0).unwrap_or_default()
    }
}

/// What `store.read` answers.
#[derive(Debug, Clone, PartialEq)]
pub enum Read {
    /// The whole file, as the view holds it.
    Whole(Text),
    /// Selected lines, numbered or not.
    Lines(String),
}

impl Read {
    pub fn as_bytes(&self) -> &[u8] {
        match self {
            Read::Whole(text) => text.as_bytes(),
            Read::Lines(text) => text.as_bytes(),
        }
    }
}

#[derive(Debug, Clone)]
enum Content {
    Loaded(Rc<Vec<u8>>),
    /// In the backend, not fetched yet.
    Unloaded,
}

/// Flush the queue once it holds this many changes, so a long block's memory stays bounded.
const FLUSH_AT: usize = 256;

pub struct Store {
    backend: Rc<dyn Backend>,
    view: RefCell<View>,
}

#[derive(Default)]
struct View {
    files: BTreeMap<String, Content>,
    /// Explicit directories: parents of written files, kept after their last file is deleted.
    dirs: BTreeSet<String>,
    read_only: bool,
    pending: Vec<Change>,
    claims: Claims,
    /// Bytes of file contents in `files` (loaded ones) and in `pending` writes: what the view
    /// holds for the prompt, which the memory ceiling counts.
    held: usize,
}

fn parents(p: &str) -> impl Iterator<Item = &str> {
    p.match_indices('/').map(move |(i, _)| &p[..i])
}

/// Lines split at `\n` (a trailing `\r` dropped); a final newline adds no empty last line.
fn lines(text: &str) -> Vec<&str> {
    let body = text.strip_suffix('\n').unwrap_or(text);
    if text.is_empty() {
        return Vec::new();
    }
    body.split('\n').map(|l| l.strip_suffix('\r').unwrap_or(l)).collect()
}

impl Store {
    /// Opens the host's backend: the listing is read once, here.
    pub async fn open(backend: Rc<dyn Backend>) -> Result<Rc<Store>, String> {
        let opened = backend.open().await?;
        let mut view = View { read_only: opened.read_only, ..Default::default() };
        for (p, data) in opened.files {
            for parent in parents(&p) {
                view.dirs.insert(parent.to_string());
            }
            view.held += data.as_ref().map_or(0, Vec::len);
            view.files.insert(p, data.map(|d| Content::Loaded(Rc::new(d))).unwrap_or(Content::Unloaded));
        }
        view.dirs.extend(opened.dirs);
        Ok(Rc::new(Store { backend, view: RefCell::new(view) }))
    }

    /// Sends the queued changes to the backend as one ordered batch.
    pub async fn flush(&self) -> Result<(), String> {
        let batch = {
            let mut v = self.view.borrow_mut();
            let pending: usize = v.pending.iter().map(Change::size).sum();
            v.held -= pending;
            std::mem::take(&mut v.pending)
        };
        if batch.is_empty() {
            return Ok(());
        }
        self.backend.commit(batch).await
    }

    fn claim(&self, write: bool, region: Region, who: Accessor) -> Result<(), Failure> {
        self.view.borrow_mut().claims.record(write, &region, who).map_err(|c| Failure::Conflict(c.message))
    }

    fn queue(&self, change: Change) {
        let mut v = self.view.borrow_mut();
        // Consecutive whole-file writes to one path collapse into the last: the batch still
        // leaves a prefix of the run's changes if it is cut anywhere.
        if let (Change::Write { path: new, .. }, Some(Change::Write { path: last, .. })) = (&change, v.pending.last()) {
            if new == last {
                let dropped = v.pending.pop().map_or(0, |c| c.size());
                v.held -= dropped;
            }
        }
        v.held += change.size();
        v.pending.push(change);
    }

    async fn queue_and_maybe_flush(&self, change: Change) -> Result<(), Failure> {
        self.queue(change);
        if self.view.borrow().pending.len() >= FLUSH_AT {
            self.flush().await.map_err(Failure::Backend)?;
        }
        Ok(())
    }

    /// The file's bytes; `Ok(None)` when there is no such file.
    async fn bytes(&self, p: &str) -> Result<Option<Rc<Vec<u8>>>, Failure> {
        let content = self.view.borrow().files.get(p).cloned();
        match content {
            None => Ok(None),
            Some(Content::Loaded(b)) => Ok(Some(b)),
            Some(Content::Unloaded) => {
                let data = self.backend.read(p).await.map_err(|e| match e {
                    crate::host::HostError::Failed(message) => Failure::Backend(message),
                    crate::host::HostError::TooLarge(bytes) => Failure::TooLarge(bytes),
                })?;
                // A file open() listed must have contents: no answer is the backend's failure,
                // never a silently empty file (docs/store.md).
                let data = data.ok_or_else(|| Failure::Backend(format!("read({p:?}) answered no contents for a file open() listed")))?;
                let data = Rc::new(data);
                let mut v = self.view.borrow_mut();
                v.held += data.len();
                v.files.insert(p.to_string(), Content::Loaded(data.clone()));
                Ok(Some(data))
            }
        }
    }

    /// A file's text (the view's bytes, shared, checked to be UTF-8), or the store error for a
    /// directory, a missing file, or non-UTF-8 bytes.
    async fn text(&self, p: &str) -> Result<Text, Failure> {
        match self.bytes(p).await? {
            Some(b) if std::str::from_utf8(&b).is_ok() => Ok(Text(b)),
            Some(_) => Err(err("not_utf8", format!("file is not UTF-8 text in store: {p}"), p).into()),
            None if self.view.borrow().dirs.contains(p) => Err(err("is_a_directory", format!("is a directory in store: {p}"), p).into()),
            None => Err(not_found(p).into()),
        }
    }

    /// Checks shared by every call that changes a file: read-only stores, directories in the way.
    fn check_writable(&self, p: &str) -> Result<(), StoreError> {
        let v = self.view.borrow();
        if v.read_only {
            return Err(err("permission_denied", format!("permission denied in store: {p}"), p));
        }
        if v.dirs.contains(p) {
            return Err(err("is_a_directory", format!("is a directory in store: {p}"), p));
        }
        if parents(p).any(|parent| v.files.contains_key(parent)) {
            return Err(err("not_a_directory", format!("not a directory in store: {p}"), p));
        }
        Ok(())
    }

    async fn put(&self, p: &str, data: Vec<u8>) -> Result<(), Failure> {
        {
            let mut v = self.view.borrow_mut();
            for parent in parents(p) {
                v.dirs.insert(parent.to_string());
            }
            v.held += data.len();
            if let Some(Content::Loaded(old)) = v.files.insert(p.to_string(), Content::Loaded(Rc::new(data.clone()))) {
                v.held -= old.len();
            }
        }
        self.queue_and_maybe_flush(Change::Write { path: p.to_string(), data }).await
    }

    pub async fn write(&self, who: Accessor<'_>, p: &str, contents: &[u8]) -> Result<(), Failure> {
        check(p)?;
        self.check_writable(p)?;
        self.claim(true, Region::Path(p.into()), who)?;
        self.put(p, contents.to_vec()).await
    }

    pub async fn append(&self, who: Accessor<'_>, p: &str, contents: &[u8]) -> Result<(), Failure> {
        check(p)?;
        self.check_writable(p)?;
        self.claim(true, Region::Path(p.into()), who)?;
        let existing = self.bytes(p).await?;
        if contents.is_empty() && existing.is_some() {
            return Ok(());
        }
        let mut data = existing.map(|b| b.to_vec()).unwrap_or_default();
        data.extend_from_slice(contents);
        self.put(p, data).await
    }

    /// `store.read` and `store.read_numbered`: the whole file verbatim without bounds; with
    /// bounds, the selected lines (numbered or not) joined by `\n`, bound rules in their order.
    pub async fn read(&self, who: Accessor<'_>, p: &str, start: Option<i64>, end: Option<i64>, numbered: bool) -> Result<Read, Failure> {
        check(p)?;
        if start.is_none() {
            if let Some(e) = end {
                if e < 1 {
                    return Err(invalid_range(p, "end must be at least 1").into());
                }
            }
        }
        self.claim(false, Region::Path(p.into()), who)?;
        let text = self.text(p).await?;
        if start.is_none() && end.is_none() && !numbered {
            return Ok(Read::Whole(text));
        }
        let all = lines(text.as_str());
        let start = start.unwrap_or(1);
        if start < 1 {
            return Err(invalid_range(p, "start must be at least 1").into());
        }
        let last = all.len() as i64;
        if start > last {
            return Ok(Read::Lines(String::new()));
        }
        let end = end.unwrap_or(last).min(last);
        if end < start {
            return Err(invalid_range(p, "end must not be before start").into());
        }
        let slice = &all[(start - 1) as usize..end as usize];
        if !numbered {
            return Ok(Read::Lines(slice.join("\n")));
        }
        let width = end.to_string().len();
        Ok(Read::Lines(slice.iter().zip(start..).map(|(line, n)| format!("{n:>width$}| {line}")).collect::<Vec<_>>().join("\n")))
    }

    pub async fn str_replace(&self, who: Accessor<'_>, p: &str, old: &str, new: &str) -> Result<(), Failure> {
        check(p)?;
        let anchor_err =
            |message: String, count: i64| StoreError { anchor: Some(old.to_string()), count: Some(count), ..err("anchor", message, p) };
        if old.is_empty() {
            return Err(anchor_err(format!("empty anchor for {p}: the text to replace must not be empty"), 0).into());
        }
        self.check_writable(p)?;
        self.claim(true, Region::Path(p.into()), who)?;
        let text = self.text(p).await?;
        let text = text.as_str();
        let count = text.matches(old).count() as i64;
        if count == 0 {
            return Err(anchor_err(format!("anchor not found in {p}: {old:?}"), 0).into());
        }
        if count > 1 {
            return Err(anchor_err(
                format!("anchor occurs {count} times in {p}: {old:?}; include more surrounding text so that it occurs once"),
                count,
            )
            .into());
        }
        self.put(p, text.replacen(old, new, 1).into_bytes()).await
    }

    pub async fn delete(&self, who: Accessor<'_>, p: &str) -> Result<(), Failure> {
        check(p)?;
        if self.view.borrow().read_only {
            return Err(err("permission_denied", format!("permission denied in store: {p}"), p).into());
        }
        self.claim(true, Region::Path(p.into()), who)?;
        let change = {
            let mut v = self.view.borrow_mut();
            if let Some(removed) = v.files.remove(p) {
                if let Content::Loaded(old) = removed {
                    v.held -= old.len();
                }
                Some(Change::Delete { path: p.to_string() })
            } else if v.dirs.contains(p) {
                let prefix = format!("{p}/");
                let occupied = v.files.range(prefix.clone()..).next().is_some_and(|(k, _)| k.starts_with(&prefix))
                    || v.dirs.range(prefix.clone()..).next().is_some_and(|k| k.starts_with(&prefix));
                if occupied {
                    return Err(err("directory_not_empty", format!("directory not empty in store: {p}"), p).into());
                }
                v.dirs.remove(p);
                Some(Change::Delete { path: p.to_string() })
            } else {
                None
            }
        };
        let Some(change) = change else { return Ok(()) };
        self.queue_and_maybe_flush(change).await?;
        // The directories of a deleted file stay (until deleted themselves): tell the backend,
        // which may only have known them as parents of files.
        for parent in parents(p) {
            if self.view.borrow().dirs.contains(parent) {
                self.queue_and_maybe_flush(Change::MakeDir { path: parent.to_string() }).await?;
            }
        }
        Ok(())
    }

    pub fn exists(&self, who: Accessor<'_>, p: &str) -> Result<bool, Failure> {
        check(p)?;
        self.claim(false, Region::Path(p.into()), who)?;
        let v = self.view.borrow();
        Ok(v.files.contains_key(p) || v.dirs.contains(p))
    }

    pub fn glob(&self, who: Accessor<'_>, pattern: &str) -> Result<Vec<String>, Failure> {
        let parsed = path::parse_pattern(pattern).map_err(|rule| StoreError {
            reason: "invalid_path",
            message: format!("invalid glob pattern {pattern:?}: {}", rule.pattern_reason()),
            path: Some(pattern.to_string()),
            rule: Some(if matches!(rule, Rule::Wildcard) { "wildcard" } else { rule.tag() }),
            ..Default::default()
        })?;
        self.claim(false, Region::Pattern(pattern.into()), who)?;
        let v = self.view.borrow();
        let found: Vec<String> = if parsed.dirs {
            v.dirs.iter().filter(|d| parsed.matches(d)).cloned().collect()
        } else {
            v.files.keys().filter(|f| parsed.matches(f)).cloned().collect()
        };
        Ok(found)
    }

    /// Whether a file (not a directory) is at `p`: output checks.
    /// Bytes the view holds for the prompt: loaded file contents and queued writes.
    pub fn held_bytes(&self) -> usize {
        self.view.borrow().held
    }

    pub fn has_file(&self, p: &str) -> bool {
        self.view.borrow().files.contains_key(p)
    }
}
