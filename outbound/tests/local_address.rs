//! `Outbound::local_address`: a pinned client connects from the address it names (the crawler's
//! second look from `crawl.second_source`), and from the system's choice when it names none.

use std::net::{IpAddr, Ipv4Addr, SocketAddr};

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpListener;
use toolmark_outbound::Outbound;
use toolmark_outbound::guard::{self, Policy};

/// The peer address of the one connection `GET /` makes to a listener on 127.0.0.1 with
/// `local_address` set as given.
async fn peer_of_a_get(local_address: Option<IpAddr>) -> SocketAddr {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = listener.local_addr().unwrap().port();
    let server = tokio::spawn(async move {
        let (mut socket, peer) = listener.accept().await.unwrap();
        let mut request = vec![0u8; 4096];
        let _ = socket.read(&mut request).await.unwrap();
        socket
            .write_all(b"HTTP/1.1 200 OK\r\ncontent-length: 0\r\nconnection: close\r\n\r\n")
            .await
            .unwrap();
        peer
    });
    let settings = Outbound {
        policy: Policy {
            allow_private: true,
        },
        local_address,
        ..Outbound::default()
    };
    let url = format!("http://127.0.0.1:{port}/");
    let pinned = guard::check(&url, settings.policy, settings.resolver.as_ref())
        .await
        .unwrap();
    let client = toolmark_outbound::client::pinned(&settings, &pinned, Default::default()).unwrap();
    let response = client.get(pinned.url.clone()).send().await.unwrap();
    assert_eq!(response.status(), 200);
    server.await.unwrap()
}

#[tokio::test]
async fn a_pinned_client_connects_from_the_local_address_it_is_given() {
    // Linux routes all of 127.0.0.0/8 to `lo`: any of it is a local address to bind.
    let source = IpAddr::V4(Ipv4Addr::new(127, 0, 0, 29));
    assert_eq!(peer_of_a_get(Some(source)).await.ip(), source);
}

#[tokio::test]
async fn without_a_local_address_the_system_picks_one() {
    let default = Outbound::default();
    assert_eq!(default.local_address, None);
    assert_eq!(
        peer_of_a_get(None).await.ip(),
        IpAddr::V4(Ipv4Addr::LOCALHOST)
    );
}
