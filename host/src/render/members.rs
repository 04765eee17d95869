//! The members of a JSON object a renderer assembles from a result (the legacy
//! envelope, the metadata map), borrowed from the result until they are written.
//!
//! They keep the rule of a JSON object built by inserting its members one by
//! one, as `serde_json::Map` does: a key inserted again keeps its first place
//! and takes the new value (a key kept from a legacy envelope may repeat a
//! well-known one). They are written as they stand ([`Members`] serializes as
//! an object), or turned into a `Map` where a typed value needs one
//! ([`Members::into_map`]).
//!
//! A result has a handful of them, so they sit in a vector and a new key is
//! looked for by comparing keys: no hashing, one allocation. Past [`SEARCHED`]
//! members (a guest's legacy answer may keep any number of keys) they move
//! into a hashed map, so inserting stays linear in the number of keys.

use std::borrow::Cow;

use indexmap::IndexMap;
use serde::ser::SerializeMap as _;
use serde::{Serialize, Serializer};
use serde_json::{Map, Value};

/// How many members are kept in a vector and searched before they move into a
/// hashed map: comparing a dozen short keys (most differ in length) costs about
/// what hashing one does, without the map's allocations.
const SEARCHED: usize = 16;

/// The members of one JSON object, in the order their keys were first inserted.
#[derive(Default)]
pub(crate) struct Members<'a>(Kept<'a>);

enum Kept<'a> {
    Searched(Vec<(Cow<'a, str>, Member<'a>)>),
    Hashed(IndexMap<Cow<'a, str>, Member<'a>>),
}

impl Default for Kept<'_> {
    fn default() -> Self {
        Kept::Searched(Vec::new())
    }
}

impl<'a> Members<'a> {
    /// Sets `key` to `value`: in its place when it is there, at the end when not.
    pub(crate) fn insert(&mut self, key: impl Into<Cow<'a, str>>, value: Member<'a>) {
        let key = key.into();
        match &mut self.0 {
            Kept::Searched(members) => {
                if let Some((_, old)) = members.iter_mut().find(|(k, _)| *k == key) {
                    *old = value;
                } else if members.len() < SEARCHED {
                    members.push((key, value));
                } else {
                    let mut hashed: IndexMap<_, _> = std::mem::take(members).into_iter().collect();
                    hashed.insert(key, value);
                    self.0 = Kept::Hashed(hashed);
                }
            }
            // In its place when it is there (`IndexMap::insert` keeps it).
            Kept::Hashed(members) => {
                members.insert(key, value);
            }
        }
    }

    /// The members in order.
    pub(crate) fn iter(&self) -> impl Iterator<Item = (&str, &Member<'a>)> {
        let (searched, hashed) = match &self.0 {
            Kept::Searched(members) => (Some(members.iter().map(|(k, v)| (k, v))), None),
            Kept::Hashed(members) => (None, Some(members.iter())),
        };
        searched
            .into_iter()
            .flatten()
            .chain(hashed.into_iter().flatten())
            .map(|(key, value)| (key.as_ref(), value))
    }

    fn len(&self) -> usize {
        match &self.0 {
            Kept::Searched(members) => members.len(),
            Kept::Hashed(members) => members.len(),
        }
    }

    /// The members as a JSON object of their own, for a typed value that holds one.
    pub(crate) fn into_map(self) -> Map<String, Value> {
        let mut map = Map::with_capacity(self.len());
        let mut add = |key: Cow<'a, str>, value: Member<'a>| {
            map.insert(key.into_owned(), value.into_value());
        };
        match self.0 {
            Kept::Searched(members) => members.into_iter().for_each(|(k, v)| add(k, v)),
            Kept::Hashed(members) => members.into_iter().for_each(|(k, v)| add(k, v)),
        }
        map
    }
}

impl Serialize for Members<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut map = serializer.serialize_map(Some(self.len()))?;
        for (key, value) in self.iter() {
            map.serialize_entry(key, value)?;
        }
        map.end()
    }
}

/// One value of an object's members, borrowed from the result where it can be.
pub(crate) enum Member<'a> {
    Bool(bool),
    Str(&'a str),
    /// A time, written as its RFC 3339 text.
    Time(jiff::Timestamp),
    Json(&'a Value),
    Owned(Value),
    Object(Members<'a>),
}

impl Member<'_> {
    fn into_value(self) -> Value {
        match self {
            Member::Bool(value) => Value::Bool(value),
            Member::Str(text) => Value::String(text.to_owned()),
            Member::Time(at) => with_time_text(at, |text| Value::String(text.to_owned())),
            Member::Json(value) => value.clone(),
            Member::Owned(value) => value,
            Member::Object(members) => Value::Object(members.into_map()),
        }
    }
}

impl Serialize for Member<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        match self {
            Member::Bool(value) => serializer.serialize_bool(*value),
            Member::Str(text) => serializer.serialize_str(text),
            Member::Time(at) => with_time_text(*at, |text| serializer.serialize_str(text)),
            Member::Json(value) => value.serialize(serializer),
            Member::Owned(value) => value.serialize(serializer),
            Member::Object(members) => members.serialize(serializer),
        }
    }
}

/// Calls `f` with the RFC 3339 text of `at`, as its `Display` writes it.
///
/// Most renderings write a result's generation time twice (in the envelope's
/// `_meta`, in the text, and in the result's), so the last text is kept, one per
/// thread. Printed straight into that buffer, without `Display`'s formatter
/// (`collect_str`): about 400 instructions less a P1 call (#17).
fn with_time_text<R>(at: jiff::Timestamp, f: impl FnOnce(&str) -> R) -> R {
    use jiff::fmt::temporal::DateTimePrinter;
    use std::cell::RefCell;

    const PRINTER: DateTimePrinter = DateTimePrinter::new();
    thread_local! {
        static LAST: RefCell<(Option<jiff::Timestamp>, String)> =
            const { RefCell::new((None, String::new())) };
    }
    LAST.with_borrow_mut(|(last, text)| {
        if *last != Some(at) {
            text.clear();
            if PRINTER.print_timestamp(&at, &mut *text).is_err() {
                // Not reached: printing into a `String` does not fail.
                text.clear();
                let _ = std::fmt::Write::write_fmt(text, format_args!("{at}"));
            }
            *last = Some(at);
        }
        f(text)
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// A time is written as its `Display` writes it, whichever time was
    /// written before it on the thread.
    #[test]
    fn times_are_written_as_display_writes_them() {
        let times: Vec<jiff::Timestamp> = [
            "2027-01-15T08:00:00Z",
            "2027-01-15T08:00:00.5Z",
            "2026-12-07T15:29:10.123456789Z",
            "-009999-01-02T01:59:59.999999999Z",
            "1970-01-01T00:00:00Z",
        ]
        .iter()
        .map(|text| text.parse().unwrap())
        .collect();
        for round in 0..2 {
            for (i, at) in times.iter().enumerate() {
                // Each time twice in a row (the cached text), then the next.
                for _ in 0..2 {
                    let written = serde_json::to_string(&Member::Time(*at)).unwrap();
                    assert_eq!(written, format!("\"{at}\""), "round {round}, time {i}");
                    assert_eq!(Member::Time(*at).into_value(), json!(at.to_string()));
                }
            }
        }
    }

    /// Whatever the number of keys, the members are what inserting the same
    /// pairs into a `serde_json::Map` gives: the same order, the same values,
    /// the same text.
    #[test]
    fn members_keep_the_rule_of_a_json_object() {
        for count in [0, 1, 3, SEARCHED - 1, SEARCHED, SEARCHED + 1, 100] {
            let mut members = Members::default();
            let mut map = Map::new();
            // Every third key repeats an earlier one, late, with a new value.
            for i in 0..count {
                let key = if i % 3 == 2 {
                    format!("k{}", i / 2)
                } else {
                    format!("k{i}")
                };
                members.insert(key.clone(), Member::Owned(json!(i)));
                map.insert(key, json!(i));
            }
            assert_eq!(
                serde_json::to_string(&members).unwrap(),
                serde_json::to_string(&map).unwrap(),
                "{count} keys"
            );
            let keys: Vec<_> = members.iter().map(|(k, _)| k.to_owned()).collect();
            assert_eq!(
                keys,
                map.keys().cloned().collect::<Vec<_>>(),
                "{count} keys"
            );
            assert_eq!(members.into_map(), map, "{count} keys");
        }
    }

    #[test]
    fn each_member_converts_to_the_value_it_writes() {
        let data = json!({"id": [1, "x"]});
        let mut inner = Members::default();
        inner.insert("name", Member::Str("t\"x"));
        let mut members = Members::default();
        members.insert("bool", Member::Bool(false));
        members.insert(
            "time",
            Member::Time("2027-01-15T08:00:00.5Z".parse().unwrap()),
        );
        members.insert("json", Member::Json(&data));
        members.insert("owned", Member::Owned(json!(2.5)));
        members.insert("object", Member::Object(inner));
        let written = serde_json::to_string(&members).unwrap();
        assert_eq!(
            written,
            r#"{"bool":false,"time":"2027-01-15T08:00:00.5Z","json":{"id":[1,"x"]},"owned":2.5,"object":{"name":"t\"x"}}"#
        );
        assert_eq!(serde_json::to_string(&members.into_map()).unwrap(), written);
    }
}
