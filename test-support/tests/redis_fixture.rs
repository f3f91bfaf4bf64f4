//! The `redis-server` fixture: starts on a free port, answers, stops and
//! restarts on the same port with its data gone, and is gone after drop.

use std::net::TcpStream;

use mcp_test_support::RedisServer;

#[test]
fn starts_answers_stops_and_restarts_empty() {
    let mut redis = RedisServer::start();
    assert!(redis.is_running());
    assert_eq!(redis.command("PING"), "+PONG");
    assert_eq!(redis.command("SET k v"), "+OK");
    assert_eq!(redis.command("DBSIZE"), ":1");
    let port = redis.addr().port();
    assert_eq!(redis.url(), format!("redis://127.0.0.1:{port}/0"));

    redis.stop();
    assert!(!redis.is_running());
    assert!(
        TcpStream::connect(redis.addr()).is_err(),
        "a stopped server must refuse connections"
    );

    redis.restart();
    assert_eq!(redis.addr().port(), port, "restarted on the same port");
    // Nothing was persisted.
    assert_eq!(redis.command("DBSIZE"), ":0");
    let addr = redis.addr();
    drop(redis);
    assert!(TcpStream::connect(addr).is_err(), "dropped means stopped");
}

#[test]
fn two_servers_get_two_ports() {
    let (a, b) = (RedisServer::start(), RedisServer::start());
    assert_ne!(a.addr(), b.addr());
    a.command("SET only-a 1");
    assert_eq!(b.command("EXISTS only-a"), ":0");
}
