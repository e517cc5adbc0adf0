//! [`Backend`] over a JS store object (js/stores/memory.js documents the interface): `open`, `read`,
//! `commit`, each a promise.

use futures::future::LocalBoxFuture;
use js_sys::{Array, Function, Promise, Reflect, Uint8Array};
use wasm_bindgen::prelude::*;
use wasm_bindgen_futures::JsFuture;

use super::get;
use crate::host::HostError;
use crate::store::{Backend, Change, Opened};

pub struct JsBackend {
    store: JsValue,
}

impl JsBackend {
    pub fn new(store: JsValue) -> Self {
        JsBackend { store }
    }

    fn call(&self, method: &str, args: &[JsValue]) -> Result<Promise, String> {
        let f: Function = get(&self.store, method).dyn_into().map_err(|_| format!("the store has no {method}() method"))?;
        let args: Array = args.iter().collect();
        let value = f.apply(&self.store, &args).map_err(|e| describe(&e))?;
        Ok(Promise::resolve(&value))
    }
}

fn describe(e: &JsValue) -> String {
    super::host::error_text(e)
}

/// Text or bytes from JS as bytes.
fn bytes(v: &JsValue) -> Option<Vec<u8>> {
    if let Some(s) = v.as_string() {
        return Some(s.into_bytes());
    }
    v.dyn_ref::<Uint8Array>().map(|a| a.to_vec())
}

async fn settle(p: Result<Promise, String>) -> Result<JsValue, String> {
    JsFuture::from(p?).await.map_err(|e| describe(&e))
}

impl Backend for JsBackend {
    fn open(&self) -> LocalBoxFuture<'static, Result<Opened, String>> {
        let p = self.call("open", &[]);
        Box::pin(async move {
            let v = settle(p).await?;
            let mut opened = Opened { read_only: get(&v, "readOnly").as_bool().unwrap_or(false), ..Default::default() };
            let files = get(&v, "files");
            if !Array::is_array(&files) {
                return Err("open() must answer { files: [...] }".into());
            }
            for f in Array::from(&files).iter() {
                let path = get(&f, "path").as_string().ok_or("open(): a file without a string path")?;
                let data = get(&f, "data");
                opened.files.push((
                    path,
                    if data.is_undefined() { None } else { Some(bytes(&data).ok_or("open(): file data must be a string or Uint8Array")?) },
                ));
            }
            let dirs = get(&v, "dirs");
            if Array::is_array(&dirs) {
                opened.dirs = Array::from(&dirs).iter().filter_map(|d| d.as_string()).collect();
            }
            Ok(opened)
        })
    }

    fn read(&self, path: &str) -> LocalBoxFuture<'static, Result<Option<Vec<u8>>, HostError>> {
        let p = self.call("read", &[JsValue::from_str(path)]);
        Box::pin(async move {
            let v = JsFuture::from(p?).await.map_err(|e| super::host::host_error(&e))?;
            if v.is_undefined() || v.is_null() {
                return Ok(None);
            }
            bytes(&v).map(Some).ok_or_else(|| "read(): contents must be a string or Uint8Array".to_string().into())
        })
    }

    fn commit(&self, changes: Vec<Change>) -> LocalBoxFuture<'static, Result<(), String>> {
        let list = Array::new();
        for change in changes {
            let o = js_sys::Object::new();
            let (op, path) = match &change {
                Change::Write { path, .. } => ("write", path),
                Change::MakeDir { path } => ("mkdir", path),
                Change::Delete { path } => ("delete", path),
            };
            let _ = Reflect::set(&o, &"op".into(), &op.into());
            let _ = Reflect::set(&o, &"path".into(), &path.as_str().into());
            if let Change::Write { data, .. } = &change {
                let _ = Reflect::set(&o, &"data".into(), &Uint8Array::from(data.as_slice()));
            }
            list.push(&o);
        }
        let p = self.call("commit", &[list.into()]);
        Box::pin(async move { settle(p).await.map(|_| ()) })
    }
}
