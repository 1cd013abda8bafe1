//! Argument types: any Python `str` (lone surrogates included) and ints or floats of any size, with typed errors.

use super::*;

/// A Python `str` argument as UTF-8. Lone surrogates (a string cut mid-emoji, e.g. by `JSON.stringify`)
/// cannot be encoded: they become U+FFFD instead of failing the call with `UnicodeEncodeError`.
pub struct Text(pub(super) String);

impl FromPyObject<'_, '_> for Text {
    type Error = PyErr;

    fn extract(obj: Borrowed<'_, '_, PyAny>) -> PyResult<Self> {
        let s = obj.cast::<PyString>()?;
        if let Ok(text) = s.to_str() {
            return Ok(Text(text.to_owned()));
        }
        // One U+FFFD per lone surrogate, as Python's own "replace" gives (a UTF-8 round trip would give three).
        let utf16 = s.call_method1("encode", ("utf-16-le", "surrogatepass"))?;
        let units: Vec<u16> =
            utf16.cast::<PyBytes>()?.as_bytes().chunks_exact(2).map(|b| u16::from_le_bytes([b[0], b[1]])).collect();
        Ok(Text(String::from_utf16_lossy(&units)))
    }
}

impl From<&str> for Text {
    fn from(text: &str) -> Self {
        Text(text.to_owned())
    }
}

impl std::ops::Deref for Text {
    type Target = str;

    fn deref(&self) -> &str {
        &self.0
    }
}

pub(super) fn texts(items: Vec<Text>) -> Vec<String> {
    items.into_iter().map(|t| t.0).collect()
}

/// The start of an argument's repr, for error messages (`10**400` has 401 digits).
pub(super) fn short_repr(obj: Borrowed<'_, '_, PyAny>) -> String {
    let text = obj.repr().map_or_else(|_| "?".to_owned(), |r| r.to_string_lossy().into_owned());
    if text.chars().count() <= 40 {
        text
    } else {
        text.chars().take(40).collect::<String>() + "…"
    }
}

/// Numeric argument types whose out-of-range values (Python ints of any size) raise `InvalidInputError` naming the
/// value, instead of the `OverflowError` PyO3 gives for the plain Rust type.
macro_rules! bounded_argument {
    ($(#[$doc:meta])* $name:ident($inner:ty), $what:literal) => {
        $(#[$doc])*
        #[derive(Clone, Copy)]
        pub struct $name(pub(super) $inner);

        impl FromPyObject<'_, '_> for $name {
            type Error = PyErr;

            fn extract(obj: Borrowed<'_, '_, PyAny>) -> PyResult<Self> {
                obj.extract::<$inner>().map($name).map_err(|e| {
                    if e.is_instance_of::<PyOverflowError>(obj.py()) {
                        InvalidInputError::new_err(format!($what, short_repr(obj)))
                    } else {
                        e
                    }
                })
            }
        }
    };
}

bounded_argument!(
    /// An integer argument (64 bits).
    Int(i64),
    "integer {} is out of range (at most 64 bits)"
);
bounded_argument!(
    /// A float argument (an int too large for a double is refused).
    Num(f64),
    "number {} is too large for a float"
);
bounded_argument!(
    /// An id argument: an integer in [0, 2**64).
    Id(u64),
    "id {} is not in [0, 2**64)"
);

pub(super) fn nums(items: Vec<Num>) -> Vec<f64> {
    items.into_iter().map(|n| n.0).collect()
}

/// A non-negative count named `name` for error messages.
pub(super) fn count(value: Int, name: &str) -> PyResult<usize> {
    usize::try_from(value.0).map_err(|_| InvalidInputError::new_err(format!("{name} must be >= 0, got {}", value.0)))
}
