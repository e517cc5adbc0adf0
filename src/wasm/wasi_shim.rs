//! Hooks called by wasm-support/wasi_stubs.c, the in-module WASI preview1 stubs.
//! The sandbox never exposes `print` or `io`, so C stdio output is simply dropped.

#[no_mangle]
pub extern "C" fn runvil_host_write(_fd: i32, _ptr: *const u8, _len: usize) {}

#[no_mangle]
pub extern "C" fn runvil_host_now_ns() -> u64 {
    (js_sys::Date::now() * 1_000_000.0) as u64
}
