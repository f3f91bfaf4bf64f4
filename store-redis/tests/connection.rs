//! `RedisConnection` without a Redis: which URLs name a store, the key
//! layout a URL selects, the prefix, and the refusals of a URL that names
//! no server. (Connecting, losing and regaining Redis: `redis_down.rs`; a
//! real cluster: `cluster.rs`.)

use mcp_store_redis::{
    CLUSTER_SCHEME, Layout, RedisConnection, RedisConnectionConfig, RedisStoreError, is_store_url,
};

#[test]
fn store_urls_are_the_redis_schemes() {
    for url in [
        "redis://127.0.0.1:6379/0",
        "rediss://cache.example:6380",
        "redis+unix:///run/redis.sock",
        "redis+cluster://10.0.0.1:7000,10.0.0.2:7000",
    ] {
        assert!(is_store_url(url), "{url}");
    }
    for url in [
        "memory",
        "",
        "http://127.0.0.1:6379",
        "redis:/x",
        "valkey://h:1",
    ] {
        assert!(!is_store_url(url), "{url}");
    }
    assert_eq!(CLUSTER_SCHEME, "redis+cluster://");
}

fn config(url: &str) -> RedisConnectionConfig {
    let mut c = RedisConnectionConfig::new(url);
    c.prefix = "p7".to_owned();
    c
}

/// A lazy connection connects to nothing: it only reads the URL.
#[tokio::test]
async fn a_cluster_url_selects_the_cluster_layout() {
    let single = RedisConnection::lazy(&config("redis://127.0.0.1:1")).unwrap();
    assert_eq!(single.layout(), Layout::Single);
    assert_eq!(single.prefix(), "p7");
    for url in [
        "redis+cluster://127.0.0.1:1",
        "redis+cluster://127.0.0.1:1,127.0.0.1:2/",
        "redis+cluster://,127.0.0.1:1,,",
    ] {
        let cluster = RedisConnection::lazy(&config(url)).unwrap();
        assert_eq!(cluster.layout(), Layout::Cluster, "{url}");
        assert_eq!(cluster.prefix(), "p7");
    }
    let shown = format!("{single:?}");
    assert!(
        shown.contains("RedisConnection") && shown.contains("p7") && shown.contains("Single"),
        "{shown}"
    );
    let shown = format!(
        "{:?}",
        RedisConnection::lazy(&config("redis+cluster://127.0.0.1:1")).unwrap()
    );
    assert!(shown.contains("Cluster"), "{shown}");
}

/// A cluster URL without a node, or a URL that does not parse, is refused
/// before any connection.
#[tokio::test]
async fn a_url_naming_no_server_is_refused() {
    for url in ["redis+cluster://", "redis+cluster://,/", "not a url"] {
        match RedisConnection::lazy(&config(url)) {
            Err(RedisStoreError::Protocol(_) | RedisStoreError::Refused(_)) => {}
            other => panic!("{url}: {other:?}"),
        }
    }
}
