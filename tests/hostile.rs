//! Hostile hosts against the native engine: backends that never answer or answer nothing.
mod common;
use common::*;
use futures::future::LocalBoxFuture;
use runvil::store::{Backend, Change, MemoryBackend, Opened};
use runvil::RunErrorKind;
use std::cell::Cell;
use std::rc::Rc;

/// A memory backend whose `open` or `commit` never settles when asked, and whose `read` can
/// answer "no contents".
#[derive(Default)]
struct Stuck {
    inner: MemoryBackend,
    open_hangs: bool,
    commit_hangs: bool,
    read_answers_none: bool,
    commits: Cell<usize>,
}

impl Backend for Stuck {
    fn open(&self) -> LocalBoxFuture<'static, Result<Opened, String>> {
        if self.open_hangs {
            return Box::pin(futures::future::pending());
        }
        let opened = self.inner.open();
        Box::pin(async move {
            let mut o = opened.await?;
            if let Some(f) = o.files.first_mut() {
                f.1 = None; // listed without data: the engine must read() it
            }
            Ok(o)
        })
    }
    fn read(&self, path: &str) -> LocalBoxFuture<'static, Result<Option<Vec<u8>>, String>> {
        if self.read_answers_none {
            return Box::pin(futures::future::ready(Ok(None)));
        }
        self.inner.read(path)
    }
    fn commit(&self, changes: Vec<Change>) -> LocalBoxFuture<'static, Result<(), String>> {
        self.commits.set(self.commits.get() + 1);
        if self.commit_hangs {
            return Box::pin(futures::future::pending());
        }
        self.inner.commit(changes)
    }
}

fn lua(code: &str) -> String {
    prompt(&format!("## Main\n\n```lua\n{code}\n```\n"))
}

#[test]
fn a_cancelled_run_does_not_wait_for_an_open_that_never_settles() {
    let host = Rc::new(TestHost::default());
    host.cancelled.set(true);
    let backend: Rc<dyn Backend> = Rc::new(Stuck { open_hangs: true, ..Default::default() });
    let e = run_with(host, &lua("return 1"), "", |o| o.store = Some(backend)).unwrap_err();
    assert_eq!((e.kind, e.message.as_str()), (RunErrorKind::Cancelled, "the run was cancelled"));
}

#[test]
fn a_cancelled_run_does_not_wait_for_a_commit_that_never_settles() {
    let host = Rc::new(TestHost::default());
    host.cancel_after_yields.set(Some(1));
    let stuck = Rc::new(Stuck { commit_hangs: true, ..Default::default() });
    let backend: Rc<dyn Backend> = stuck.clone();
    let e = run_with(host, &lua("store.write('a.txt', 'x')\nwhile true do end"), "", |o| o.store = Some(backend)).unwrap_err();
    assert_eq!((e.kind, e.message.as_str()), (RunErrorKind::Cancelled, "the run was cancelled"));
    assert_eq!(stuck.commits.get(), 1, "the batch was handed over whole once");
}

#[test]
fn a_read_without_contents_is_a_vfs_failure_not_an_empty_file() {
    let stuck = Stuck {
        inner: MemoryBackend::new(vec![("notes.txt".into(), b"hello".to_vec())], false),
        read_answers_none: true,
        ..Default::default()
    };
    let backend: Rc<dyn Backend> = Rc::new(stuck);
    let e = run_with(Rc::new(TestHost::default()), &lua("return '[' .. store.read('notes.txt') .. ']'"), "", |o| {
        o.store = Some(backend)
    })
    .unwrap_err();
    assert_eq!(e.kind, RunErrorKind::Vfs);
    assert_eq!(e.message, "store backend failure: read(\"notes.txt\") answered no contents for a file open() listed");
}
