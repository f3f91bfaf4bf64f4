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

/// The cluster fixture: three masters covering every slot, a
/// `redis+cluster://` URL naming them, keys spread over the nodes, and
/// every node gone after drop.
#[test]
fn a_cluster_starts_covers_every_slot_and_stops() {
    let cluster = mcp_test_support::RedisCluster::start();
    let ports: Vec<u16> = cluster.ports().collect();
    assert_eq!(ports.len(), 3);
    let info = cluster.node_command(ports[0], &["CLUSTER", "INFO"]);
    assert!(info.contains("cluster_slots_assigned:16384"), "{info}");
    assert!(info.contains("cluster_known_nodes:3"), "{info}");
    assert_eq!(
        cluster.url(),
        format!(
            "redis+cluster://127.0.0.1:{},127.0.0.1:{},127.0.0.1:{}",
            ports[0], ports[1], ports[2]
        )
    );
    for i in 0..30 {
        assert_eq!(
            cluster.command(&["SET", &format!("k{i}"), "v"]).trim(),
            "OK"
        );
    }
    assert_eq!(cluster.dbsize(), 30);
    let holding = ports
        .iter()
        .filter(|p| cluster.node_command(**p, &["DBSIZE"]).trim() != "0")
        .count();
    assert_eq!(holding, 3, "keys land on every master");
    drop(cluster);
    for p in ports {
        assert!(
            TcpStream::connect(("127.0.0.1", p)).is_err(),
            "node {p} still listening"
        );
    }
}
