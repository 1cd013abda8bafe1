//! The crate's one error type. Bindings map each variant to a Python class once
//! (see `python.rs`); the pure core never touches PyO3.

/// Errors raised by the pure core.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// An argument is out of range or has the wrong shape; the message names it.
    #[error("{0}")]
    InvalidInput(String),
    /// The BM25 index could not be opened, written or read.
    #[error("search index {location}: {message}")]
    Index { location: String, message: String },
}

pub type Result<T> = std::result::Result<T, Error>;

/// Shorthand for `Err(Error::InvalidInput(..))` with `format!` arguments.
macro_rules! invalid {
    ($($arg:tt)*) => {
        Err($crate::error::Error::InvalidInput(format!($($arg)*)))
    };
}
pub(crate) use invalid;
