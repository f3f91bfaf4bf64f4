//! [`RedisStoreError`]: what a Redis store reports as the traits' `Backend`
//! error.

/// Why a Redis store operation failed. Wrapped in `StoreError::Backend`,
/// `ReplayError::Backend` or `TaskStoreError::Backend`: a server answers
/// it with 503 (the state it needs is unreachable for now), never with a
/// 4xx.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum RedisStoreError {
    /// Redis could not be reached, dropped the connection, or did not
    /// answer within the response timeout. Retrying later may succeed.
    #[error("Redis is unavailable: {0}")]
    Unavailable(#[source] redis::RedisError),
    /// Redis answered with an error (a script error, out of memory, …).
    #[error("Redis refused the operation: {0}")]
    Refused(#[source] redis::RedisError),
    /// Redis answered something the store did not expect (another program
    /// writing under the same key prefix, say).
    #[error("unexpected reply from Redis: {0}")]
    Protocol(String),
    /// A stored task record that does not parse.
    #[error("a stored task record is corrupt: {0}")]
    Corrupt(#[source] serde_json::Error),
    /// A read-modify-write lost the race too many times in a row.
    #[error("too much contention on {0}")]
    Contention(String),
}

impl RedisStoreError {
    /// Whether the error means Redis is (for now) unreachable rather than
    /// refusing: a retry after a while may succeed.
    pub fn is_unavailable(&self) -> bool {
        matches!(self, RedisStoreError::Unavailable(_))
    }
}

impl From<redis::RedisError> for RedisStoreError {
    fn from(e: redis::RedisError) -> Self {
        if e.is_io_error()
            || e.is_timeout()
            || e.is_connection_dropped()
            || e.is_connection_refusal()
            || e.is_unrecoverable_error()
        {
            RedisStoreError::Unavailable(e)
        } else {
            RedisStoreError::Refused(e)
        }
    }
}

#[cfg(test)]
mod tests {
    use std::io;

    use super::*;

    fn of(e: redis::RedisError) -> RedisStoreError {
        RedisStoreError::from(e)
    }

    /// Errors of the connection (refused, timed out, dropped, any other
    /// I/O failure) mean Redis is unavailable for now; an answer Redis
    /// gave (or a client-side refusal) is not, and retrying will not help.
    #[test]
    fn connection_failures_are_unavailable_and_answers_are_refusals() {
        for kind in [
            io::ErrorKind::ConnectionRefused,
            io::ErrorKind::TimedOut,
            io::ErrorKind::ConnectionReset,
            io::ErrorKind::PermissionDenied,
        ] {
            let e = of(io::Error::new(kind, "socket").into());
            assert!(e.is_unavailable(), "{kind:?}: {e}");
            assert!(e.to_string().starts_with("Redis is unavailable: "), "{e}");
        }
        for e in [
            redis::RedisError::from((redis::ErrorKind::Client, "script")),
            redis::RedisError::from((redis::ErrorKind::UnexpectedReturnType, "a string")),
        ] {
            let e = of(e);
            assert!(!e.is_unavailable(), "{e}");
            assert!(
                e.to_string().starts_with("Redis refused the operation: "),
                "{e}"
            );
        }
        assert!(!RedisStoreError::Protocol("x".into()).is_unavailable());
        assert!(!RedisStoreError::Contention("task t".into()).is_unavailable());
    }
}
