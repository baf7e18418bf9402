//! RFC 6901 JSON Pointers, built while walking a document.

use std::fmt;

/// A JSON Pointer under construction. Cheap to extend: `ptr.key("a").index(3)`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Pointer(String);

impl Pointer {
    /// The whole document (`""`).
    pub fn root() -> Self {
        Pointer(String::new())
    }

    /// This pointer extended by an object key, escaped as RFC 6901 says.
    pub fn key(&self, key: &str) -> Self {
        let mut s = String::with_capacity(self.0.len() + key.len() + 1);
        s.push_str(&self.0);
        s.push('/');
        for c in key.chars() {
            match c {
                '~' => s.push_str("~0"),
                '/' => s.push_str("~1"),
                c => s.push(c),
            }
        }
        Pointer(s)
    }

    /// This pointer extended by an array index.
    pub fn index(&self, index: usize) -> Self {
        Pointer(format!("{}/{}", self.0, index))
    }

    /// The pointer text.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl fmt::Display for Pointer {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl From<Pointer> for String {
    fn from(p: Pointer) -> String {
        p.0
    }
}

impl From<&Pointer> for String {
    fn from(p: &Pointer) -> String {
        p.0.clone()
    }
}

/// Splits a pointer into unescaped reference tokens; `None` when malformed.
pub fn tokens(pointer: &str) -> Option<Vec<String>> {
    if pointer.is_empty() {
        return Some(Vec::new());
    }
    let rest = pointer.strip_prefix('/')?;
    Some(
        rest.split('/')
            .map(|t| t.replace("~1", "/").replace("~0", "~"))
            .collect(),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escapes_and_round_trips() {
        let p = Pointer::root().key("a/b").key("m~n").index(2);
        assert_eq!(p.as_str(), "/a~1b/m~0n/2");
        assert_eq!(tokens(p.as_str()).unwrap(), vec!["a/b", "m~n", "2"]);
        assert_eq!(tokens("x"), None);
    }
}
