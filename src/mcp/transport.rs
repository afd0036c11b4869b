//! Transports: stdio (default) and streamable HTTP on `/mcp`.
//!
//! stdio: stdout carries protocol bytes only. Before serving, fd 1 is
//! duplicated into a private descriptor that rmcp writes to, and stderr is
//! put on fd 1, so a stray write by a native library (DuckDB's C++) or a
//! forgotten print lands on stderr instead of corrupting the stream.
//!
//! HTTP: rmcp's `StreamableHttpService` under axum, loopback Host and Origin
//! checks on, legacy sessions for 2025-11-25 clients and stateless serving
//! for 2026-07-28 ones; with a `gate`, bearer authentication in front of it
//! (and the resource's public name added to the allowed Hosts). A
//! non-loopback address without a gate is refused.
//!
//! Architecture invariant: transport plumbing only.

use std::net::SocketAddr;
use std::sync::Arc;

use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::streamable_http_server::{StreamableHttpServerConfig, StreamableHttpService};
use rmcp::ServiceExt;

use super::gate::{self, Gate};
use super::SchemaBrainServer;
use crate::tools::Session;

/// Serves MCP over stdin/stdout until stdin closes.
pub async fn serve_stdio(shared: Arc<Session>) -> anyhow::Result<()> {
    let out = protocol_stdout()?;
    let server = SchemaBrainServer::new(shared);
    let running = server.serve((tokio::io::stdin(), out)).await?;
    running.waiting().await?;
    Ok(())
}

/// A private handle on the real stdout; fd 1 then points at stderr.
fn protocol_stdout() -> anyhow::Result<tokio::fs::File> {
    use std::os::fd::FromRawFd;
    // SAFETY: dup/dup2 on the process's own standard descriptors; the
    // duplicate is owned by the returned File alone.
    unsafe {
        let private = libc::dup(1);
        if private < 0 {
            anyhow::bail!("cannot duplicate stdout: {}", std::io::Error::last_os_error());
        }
        if libc::dup2(2, 1) < 0 {
            anyhow::bail!("cannot redirect stdout to stderr: {}", std::io::Error::last_os_error());
        }
        Ok(tokio::fs::File::from_std(std::fs::File::from_raw_fd(private)))
    }
}

/// The axum router serving MCP on `/mcp` (exposed for tests), open to
/// whoever passes the loopback Host and Origin checks.
pub fn http_router(shared: Arc<Session>, allowed_hosts: Vec<String>) -> axum::Router {
    http_router_with(shared, allowed_hosts, None)
}

/// `http_router`, with `gate` demanding a bearer credential on `/mcp` and
/// serving the Protected Resource Metadata.
pub fn http_router_with(shared: Arc<Session>, allowed_hosts: Vec<String>, gate: Option<Arc<Gate>>) -> axum::Router {
    let config = StreamableHttpServerConfig::default()
        .with_allowed_hosts(allowed_hosts)
        .with_allowed_origins(["http://localhost:*", "http://127.0.0.1:*", "http://[::1]:*"])
        .with_sse_keep_alive(None)
        .with_json_response(true);
    let service = StreamableHttpService::new(
        move || Ok(SchemaBrainServer::new(shared.clone())),
        Arc::new(LocalSessionManager::default()),
        config,
    );
    let router = axum::Router::new().nest_service("/mcp", service);
    let Some(gate) = gate else { return router };
    // `layer` wraps the routes added so far: the metadata added after it stays public.
    let mut router = router.layer(axum::middleware::from_fn_with_state(gate.clone(), gate::require_bearer));
    for path in gate.metadata_paths() {
        router = router.route(&path, axum::routing::get(gate::metadata).with_state(gate.clone()));
    }
    router
}

/// Why `addr` may not be served (a non-loopback address without
/// authentication), or `None`.
pub fn open_refusal(addr: SocketAddr, authenticated: bool) -> Option<String> {
    (!authenticated && !addr.ip().is_loopback()).then(|| {
        format!(
            "--http {addr} is not a loopback address: serving it needs authentication (--api-keys FILE, or --oauth-issuer URL with --oauth-jwks FILE); see docs/mcp.md, \"Running schemabrain for a team\""
        )
    })
}

/// Serves MCP over streamable HTTP at `http://ADDR/mcp` until Ctrl-C. A
/// non-loopback address is refused without a gate: anyone who can reach
/// the port could call every tool.
pub async fn serve_http(shared: Arc<Session>, addr: SocketAddr, gate: Option<Arc<Gate>>) -> anyhow::Result<()> {
    if let Some(why) = open_refusal(addr, gate.is_some()) {
        anyhow::bail!(why);
    }
    let listener = tokio::net::TcpListener::bind(addr).await?;
    let local = listener.local_addr()?;
    let mut hosts = vec!["localhost".to_string(), "127.0.0.1".to_string(), "::1".to_string(), local.to_string()];
    if let Some(g) = &gate {
        // The name clients reach us by (a proxy's, behind TLS), with and without its port.
        let authority = g.authority().to_string();
        if let Some((host, _port)) = authority.rsplit_once(':').filter(|(h, p)| !h.is_empty() && p.chars().all(|c| c.is_ascii_digit())) {
            hosts.push(host.trim_start_matches('[').trim_end_matches(']').to_string());
        }
        hosts.push(authority);
    }
    let router = http_router_with(shared, hosts, gate.clone());
    match &gate {
        Some(g) => {
            tracing::info!("schemabrain MCP listening on http://{local}/mcp as resource {} (bearer authentication on)", g.resource());
            eprintln!("schemabrain MCP listening on http://{local}/mcp as resource {} (bearer authentication on; metadata: {})", g.resource(), g.metadata_url());
        }
        None => {
            tracing::info!("schemabrain MCP listening on http://{local}/mcp");
            eprintln!("schemabrain MCP listening on http://{local}/mcp");
        }
    }
    axum::serve(listener, router)
        .with_graceful_shutdown(async {
            let _ = tokio::signal::ctrl_c().await;
        })
        .await?;
    Ok(())
}
