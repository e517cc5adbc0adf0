#[cfg(target_arch = "wasm32")]
mod wasm;
