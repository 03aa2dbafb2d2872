//! The `lowdown-server` binary: `lowdown-server [--listen ADDR] [--db URL|PATH]
//! [--catalog FILE]`, or `lowdown-server catalog add|list`.

// Ingest allocates many small strings per record on several threads; mimalloc spends
// far less time in them than the system allocator (a third of ingest CPU in profiles).
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

use anyhow::Context;
use clap::Parser;
use lowdown_server::config::{self, CatalogCommand, Cli, Command};
use lowdown_server::db::{catalog, Db};
use lowdown_server::{clock, AppState};

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    tracing_subscriber::fmt()
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_default_env()
                .unwrap_or_else(|_| "lowdown_server=info".into()),
        )
        .with_writer(std::io::stderr)
        .init();
    let cli = Cli::parse();
    let trusted = lowdown_server::caller::TrustedProxies::parse(&cli.trusted_proxies)
        .map_err(anyhow::Error::msg)?;
    let home = config::lowdown_home(
        std::env::var(lowdown_core::defaults::HOME_ENV)
            .ok()
            .as_deref(),
        std::env::var("HOME").ok().as_deref(),
    );
    let url = config::database_url(
        cli.db.as_deref(),
        std::env::var("DATABASE_URL").ok().as_deref(),
        &home,
    );
    if url.starts_with("sqlite:") && cli.db.is_none() && std::env::var("DATABASE_URL").is_err() {
        std::fs::create_dir_all(&home)
            .with_context(|| format!("cannot create {}", home.display()))?;
    }
    let db = Db::open(&url, 16).await?;
    if let Some(path) = &cli.catalog {
        let text = std::fs::read_to_string(path)
            .with_context(|| format!("cannot read {}", path.display()))?;
        let is_toml = path.extension().is_some_and(|e| e == "toml");
        let services = config::parse_catalog(&text, is_toml)?;
        let n = services.len();
        catalog::upsert(&db, services, clock::now_ms())
            .await
            .map_err(|e| anyhow::anyhow!("{e}"))?;
        tracing::info!(services = n, "catalog loaded");
    }
    match cli.command {
        Some(Command::Catalog(cmd)) => {
            if let CatalogCommand::Add {
                id,
                hosts,
                service_name,
            } = cmd
            {
                let s = catalog::Service {
                    id,
                    name: service_name.unwrap_or_default(),
                    hosts,
                };
                let s = config::check_service(0, s)?;
                catalog::upsert(&db, vec![s], clock::now_ms())
                    .await
                    .map_err(|e| anyhow::anyhow!("{e}"))?;
            }
            // Both `add` and `list` end by printing the whole catalog.
            let services = catalog::list(&db)
                .await
                .map_err(|e| anyhow::anyhow!("{e}"))?;
            println!("{}", serde_json::to_string_pretty(&services)?);
        }
        None => {
            let listener = tokio::net::TcpListener::bind(cli.listen)
                .await
                .with_context(|| format!("cannot listen on {}", cli.listen))?;
            let backend = format!("{:?}", db.backend).to_lowercase();
            tracing::info!(listen = %cli.listen, database = %backend, "lowdown-server ready");
            eprintln!(
                "lowdown-server listening on http://{} ({backend})",
                cli.listen
            );
            if cli.unsafe_allow_private_hosts {
                tracing::warn!("--unsafe-allow-private-hosts: private hosts are stored and listed");
            }
            let state = AppState::new(db, cli.name)
                .with_trusted_proxies(trusted)
                .with_private_hosts(cli.unsafe_allow_private_hosts);
            lowdown_server::serve(listener, state, lowdown_server::serve::shutdown_signal())
                .await?;
        }
    }
    Ok(())
}
