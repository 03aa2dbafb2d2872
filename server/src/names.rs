//! Small conversions between the core's enums, stored text and lookup keys.

use serde::de::DeserializeOwned;
use serde::Serialize;

/// The snake_case name a core enum serialises to (`OutcomeClass::Success` → `success`).
pub fn enum_str<T: Serialize>(v: &T) -> String {
    match serde_json::to_value(v) {
        Ok(serde_json::Value::String(s)) => s,
        _ => String::new(),
    }
}

/// The snake_case name of a core enum's unit variant, without allocating: serde hands the
/// (renamed) variant name to `serialize_unit_variant` as a `&'static str`. `None` for
/// anything that is not a unit variant (use [`enum_str`] then).
pub fn enum_name<T: Serialize>(v: &T) -> Option<&'static str> {
    v.serialize(VariantName).ok()
}

/// [`enum_name`], falling back to [`enum_str`] for anything else.
pub fn enum_label<T: Serialize>(v: &T) -> std::borrow::Cow<'static, str> {
    match enum_name(v) {
        Some(s) => std::borrow::Cow::Borrowed(s),
        None => std::borrow::Cow::Owned(enum_str(v)),
    }
}

/// A serializer that accepts only unit variants and returns their name.
struct VariantName;

/// Every non-unit-variant `serialize_*` method: refuse.
macro_rules! refuse {
    ($($name:ident($($arg:ty),*) -> $ret:ty;)*) => {$(
        fn $name(self, $(_: $arg),*) -> Result<$ret, serde_json::Error> {
            Err(serde::ser::Error::custom("not a unit variant"))
        }
    )*};
}

impl serde::Serializer for VariantName {
    type Ok = &'static str;
    type Error = serde_json::Error;
    type SerializeSeq = serde::ser::Impossible<&'static str, serde_json::Error>;
    type SerializeTuple = serde::ser::Impossible<&'static str, serde_json::Error>;
    type SerializeTupleStruct = serde::ser::Impossible<&'static str, serde_json::Error>;
    type SerializeTupleVariant = serde::ser::Impossible<&'static str, serde_json::Error>;
    type SerializeMap = serde::ser::Impossible<&'static str, serde_json::Error>;
    type SerializeStruct = serde::ser::Impossible<&'static str, serde_json::Error>;
    type SerializeStructVariant = serde::ser::Impossible<&'static str, serde_json::Error>;

    fn serialize_unit_variant(
        self,
        _name: &'static str,
        _index: u32,
        variant: &'static str,
    ) -> Result<&'static str, serde_json::Error> {
        Ok(variant)
    }

    fn serialize_some<V: Serialize + ?Sized>(
        self,
        _: &V,
    ) -> Result<&'static str, serde_json::Error> {
        Err(serde::ser::Error::custom("not a unit variant"))
    }

    fn serialize_newtype_struct<V: Serialize + ?Sized>(
        self,
        _: &'static str,
        _: &V,
    ) -> Result<&'static str, serde_json::Error> {
        Err(serde::ser::Error::custom("not a unit variant"))
    }

    fn serialize_newtype_variant<V: Serialize + ?Sized>(
        self,
        _: &'static str,
        _: u32,
        _: &'static str,
        _: &V,
    ) -> Result<&'static str, serde_json::Error> {
        Err(serde::ser::Error::custom("not a unit variant"))
    }

    refuse! {
        serialize_bool(bool) -> &'static str;
        serialize_i8(i8) -> &'static str;
        serialize_i16(i16) -> &'static str;
        serialize_i32(i32) -> &'static str;
        serialize_i64(i64) -> &'static str;
        serialize_u8(u8) -> &'static str;
        serialize_u16(u16) -> &'static str;
        serialize_u32(u32) -> &'static str;
        serialize_u64(u64) -> &'static str;
        serialize_f32(f32) -> &'static str;
        serialize_f64(f64) -> &'static str;
        serialize_char(char) -> &'static str;
        serialize_str(&str) -> &'static str;
        serialize_bytes(&[u8]) -> &'static str;
        serialize_none() -> &'static str;
        serialize_unit() -> &'static str;
        serialize_unit_struct(&'static str) -> &'static str;
        serialize_seq(Option<usize>) -> Self::SerializeSeq;
        serialize_tuple(usize) -> Self::SerializeTuple;
        serialize_tuple_struct(&'static str, usize) -> Self::SerializeTupleStruct;
        serialize_tuple_variant(&'static str, u32, &'static str, usize) -> Self::SerializeTupleVariant;
        serialize_map(Option<usize>) -> Self::SerializeMap;
        serialize_struct(&'static str, usize) -> Self::SerializeStruct;
        serialize_struct_variant(&'static str, u32, &'static str, usize) -> Self::SerializeStructVariant;
    }
}

/// Parses a stored snake_case name back into a core enum.
pub fn parse_enum<T: DeserializeOwned>(s: &str) -> Option<T> {
    serde_json::from_value(serde_json::Value::String(s.to_owned())).ok()
}

/// The short-name key of a target: its last segment after `:` or `/`, lower-cased.
/// `npm:@modelcontextprotocol/server-github` → `server-github`; `brave-search` → itself.
pub fn name_key(target: &str) -> String {
    target
        .rsplit([':', '/'])
        .next()
        .unwrap_or(target)
        .to_lowercase()
}

/// Escapes `\`, `%` and `_` so a user's text matches itself literally in `LIKE ... ESCAPE '\'`.
pub fn like_escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        if matches!(c, '\\' | '%' | '_') {
            out.push('\\');
        }
        out.push(c);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn name_keys_and_like_escapes() {
        assert_eq!(
            name_key("npm:@modelcontextprotocol/server-github"),
            "server-github"
        );
        assert_eq!(name_key("Brave-Search"), "brave-search");
        assert_eq!(name_key("pypi:mcp-fetch"), "mcp-fetch");
        assert_eq!(like_escape(r"50%_a\b"), r"50\%\_a\\b");
    }

    #[test]
    fn enum_names_match_their_serialized_form() {
        use lowdown_core::aggregate::OutcomeClass;
        for class in [OutcomeClass::Success, OutcomeClass::Failure] {
            assert_eq!(enum_name(&class), Some(enum_str(&class).as_str()));
        }
        assert_eq!(enum_name(&"text"), None);
    }
}
