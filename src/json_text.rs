//! Reading JSON text into [`Json`] with every float exact: the nearest double to the literal, so
//! whatever `json.encode` (or `JSON.stringify`) wrote reads back as the same double.
//!
//! serde_json alone is not exact: without its `float_roundtrip` feature it builds a float from
//! the digits by multiplying by powers of ten, one unit in the last place off for some literals
//! (`-9.223372032337203e+85`; a fuzz finding, docs/reliability.md). The feature fixes that with
//! a second float parser that costs about 8.8 KB of the gzipped module. Here serde_json still
//! parses the text (syntax, escapes, nesting limit, error messages, integers are unchanged), and
//! each float it reports is read again from its literal with `float_text::parse_finite`, which is
//! exact and already in the module (the C library's parser, which Lua and the frontmatter's YAML
//! reader use too).
//!
//! The literal is found by a cursor over the same text: outside strings, JSON has no other
//! place for `-` or a digit than a number, and serde_json reports every number in document
//! order, so the cursor's next literal is the one being reported.

use serde::de::{DeserializeSeed, Deserializer, MapAccess, SeqAccess, Visitor};
use serde_json::{Map, Number, Value as Json};
use std::fmt;

/// Parses JSON text (one value, nothing after it but whitespace), floats exact.
pub fn parse(text: &[u8]) -> serde_json::Result<Json> {
    let mut de = serde_json::Deserializer::from_slice(text);
    let value = Exact(&mut Literals { text, at: 0 }).deserialize(&mut de)?;
    de.end()?;
    Ok(value)
}

/// [`parse`] for a `&str`.
pub fn parse_str(text: &str) -> serde_json::Result<Json> {
    parse(text.as_bytes())
}

/// A cursor over the number literals of the text, in order.
struct Literals<'a> {
    text: &'a [u8],
    at: usize,
}

impl<'a> Literals<'a> {
    /// The next number literal outside strings (empty at the end of the text).
    fn next(&mut self) -> &'a [u8] {
        let t = self.text;
        while self.at < t.len() {
            match t[self.at] {
                b'"' => {
                    self.at += 1;
                    while self.at < t.len() && t[self.at] != b'"' {
                        // An escape's second byte may be a quote.
                        self.at += if t[self.at] == b'\\' { 2 } else { 1 };
                    }
                    self.at += 1;
                }
                b'-' | b'0'..=b'9' => {
                    let start = self.at;
                    while self.at < t.len() && matches!(t[self.at], b'-' | b'+' | b'.' | b'e' | b'E' | b'0'..=b'9') {
                        self.at += 1;
                    }
                    return &t[start..self.at];
                }
                _ => self.at += 1,
            }
        }
        &[]
    }
}

/// Builds the [`Json`] value as serde_json's own does, taking floats from their literals.
struct Exact<'c, 'a>(&'c mut Literals<'a>);

impl<'de> DeserializeSeed<'de> for Exact<'_, '_> {
    type Value = Json;
    fn deserialize<D: Deserializer<'de>>(self, de: D) -> Result<Json, D::Error> {
        de.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for Exact<'_, '_> {
    type Value = Json;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("any JSON value")
    }
    fn visit_bool<E>(self, v: bool) -> Result<Json, E> {
        Ok(Json::Bool(v))
    }
    fn visit_i64<E>(self, v: i64) -> Result<Json, E> {
        self.0.next();
        Ok(Json::Number(v.into()))
    }
    fn visit_u64<E>(self, v: u64) -> Result<Json, E> {
        self.0.next();
        Ok(Json::Number(v.into()))
    }
    fn visit_f64<E>(self, v: f64) -> Result<Json, E> {
        let literal = self.0.next();
        let exact = std::str::from_utf8(literal).ok().and_then(crate::float_text::parse_finite).unwrap_or(v);
        Ok(Number::from_f64(exact).map_or(Json::Null, Json::Number))
    }
    fn visit_str<E>(self, v: &str) -> Result<Json, E> {
        Ok(Json::String(v.to_string()))
    }
    fn visit_string<E>(self, v: String) -> Result<Json, E> {
        Ok(Json::String(v))
    }
    fn visit_unit<E>(self) -> Result<Json, E> {
        Ok(Json::Null)
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Json, A::Error> {
        let mut items = Vec::new();
        while let Some(item) = seq.next_element_seed(Exact(&mut *self.0))? {
            items.push(item);
        }
        Ok(Json::Array(items))
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Json, A::Error> {
        let mut out = Map::new();
        while let Some(key) = map.next_key::<String>()? {
            let value = map.next_value_seed(Exact(&mut *self.0))?;
            out.insert(key, value);
        }
        Ok(Json::Object(out))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn floats_are_the_nearest_double() {
        // serde_json's own reading of the first is one unit in the last place off.
        let v = parse_str(r#"[-9.223372032337203e+85, {"k": "a\"1.5", "-2": [0.1, -0, 1e-400]}, 7, -8, 18446744073709551615]"#).unwrap();
        assert_eq!(v[0].as_f64().unwrap().to_bits(), (-9.223372032337203e85f64).to_bits());
        assert_eq!(v[1]["k"], "a\"1.5");
        assert_eq!(v[1]["-2"][0].as_f64(), Some(0.1));
        assert_eq!(v[1]["-2"][2].as_f64(), Some(0.0));
        assert_eq!(v[2].as_i64(), Some(7));
        assert_eq!(v[3].as_i64(), Some(-8));
        assert_eq!(v[4].as_u64(), Some(u64::MAX));
        // The same value, kind and errors as serde_json for everything else.
        assert_eq!(parse_str("12345678901234567890123").unwrap().as_f64(), Some(12345678901234567890123.0));
        for text in
            [r#"{"a":[1,2.5,-0,1e300,"x\u0000y",null,true,{"b":{}}],"c":"é"}"#, "-0", "[1e400]", "[1,]", "\"\\ud800\"", "1 2", "[[[[]]]]"]
        {
            let ours = parse_str(text).map_err(|e| e.to_string());
            let theirs = serde_json::from_str::<Json>(text).map_err(|e| e.to_string());
            assert_eq!(ours, theirs, "{text}");
        }
    }
}
