//! [`RedisConnection`]: the connection and key prefix the stores share.

use std::time::Duration;

use redis::aio::{ConnectionManager, ConnectionManagerConfig};

use crate::error::RedisStoreError;

/// How to reach Redis.
#[derive(Clone, Debug)]
pub struct RedisConnectionConfig {
    /// `redis://HOST:PORT/DB` (also `rediss://`, `redis+unix://`).
    pub url: String,
    /// Prepended to every key (`PREFIX:…`), so that several deployments
    /// (or tests) can share one Redis. Default `mcp`.
    pub prefix: String,
    /// How long one command may take before it fails as unavailable.
    /// Default 2 s.
    pub response_timeout: Duration,
    /// How long one connection attempt may take. Default 1 s.
    pub connection_timeout: Duration,
}

impl RedisConnectionConfig {
    /// The defaults for `url`.
    pub fn new(url: impl Into<String>) -> Self {
        RedisConnectionConfig {
            url: url.into(),
            prefix: "mcp".to_owned(),
            response_timeout: Duration::from_secs(2),
            connection_timeout: Duration::from_secs(1),
        }
    }
}

/// A shared connection to Redis (cheap to clone): a `ConnectionManager`,
/// which reconnects in the background after a failure, and the key prefix.
#[derive(Clone)]
pub struct RedisConnection {
    pub(crate) manager: ConnectionManager,
    /// For connections of their own (the signal bus's subscription).
    pub(crate) client: redis::Client,
    pub(crate) connection_timeout: Duration,
    pub(crate) prefix: String,
}

impl std::fmt::Debug for RedisConnection {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RedisConnection")
            .field("prefix", &self.prefix)
            .finish_non_exhaustive()
    }
}

impl RedisConnection {
    /// Connects and checks that Redis answers `PING`.
    ///
    /// # Errors
    ///
    /// [`RedisStoreError::Refused`] for a URL that does not parse,
    /// [`RedisStoreError::Unavailable`] when Redis does not answer.
    pub async fn connect(config: &RedisConnectionConfig) -> Result<Self, RedisStoreError> {
        let conn = Self::lazy(config)?;
        let mut m = conn.manager.clone();
        let _: String = redis::cmd("PING").query_async(&mut m).await?;
        Ok(conn)
    }

    /// A connection made on first use: builds even while Redis is down
    /// (operations fail as unavailable until it is up).
    ///
    /// # Errors
    ///
    /// [`RedisStoreError::Refused`] for a URL that does not parse.
    pub fn lazy(config: &RedisConnectionConfig) -> Result<Self, RedisStoreError> {
        let client = redis::Client::open(config.url.as_str())?;
        let manager_config = ConnectionManagerConfig::new()
            .set_response_timeout(Some(config.response_timeout))
            .set_connection_timeout(Some(config.connection_timeout))
            .set_number_of_retries(2)
            .set_max_delay(Duration::from_millis(500));
        let manager = ConnectionManager::new_lazy_with_config(client.clone(), manager_config)?;
        Ok(RedisConnection {
            manager,
            client,
            connection_timeout: config.connection_timeout,
            prefix: config.prefix.clone(),
        })
    }

    /// The key prefix.
    pub fn prefix(&self) -> &str {
        &self.prefix
    }
}
