//! Lua values and JSON data: the conversions every Engine global shares ([`convert`]), the
//! Engine's one userdata type ([`userdata`]), where a proxy points inside JSON the Engine holds
//! ([`json_handle`]), and the proxies that let Lua read and write it, `var` and the frozen `argv`
//! ([`proxy`]).
//!
//! JSON here is `serde_json::Value` with sorted object keys, which is exactly the compact,
//! key-sorted rendering substitution needs (`001`, "How values render").

pub mod convert;
pub mod json_handle;
pub mod proxy;
pub mod userdata;

#[cfg(test)]
mod tests;
