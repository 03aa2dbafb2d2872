//! The `lowdown-server` binary: `lowdown-server [serve] [--listen ADDR] [--db URL|PATH]
//! [--catalog FILE] [--scan-at HH:MM]`, `lowdown-server scan [...]`, or
//! `lowdown-server catalog add|list`.

// Ingest allocates many small strings per record on several threads; mimalloc spends
// far less time in them than the system allocator (a third of ingest CPU in profiles).
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

use anyhow::Context;
use clap::Parser;
use lowdown_server::config::{self, CatalogCommand, Cli, Command};
use lowdown_server::db::{catalog, Db};
use lowdown_server::scanner::{self, cli::ServeArgs};
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
    if cli.command.is_some() && cli.serve.any_given() {
        anyhow::bail!(
            "scan options (--scan-at, --registry-url, --cohort-size, --modern, --concurrency, \
             --unsafe-allow-loopback) go after the subcommand: `lowdown-server scan --registry-url URL`"
        );
    }
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
        Some(Command::Scan(args)) => {
            let cfg = args.config(scanner::progress::Mode::for_stderr());
            let summary = scanner::run(&db, &cfg).await?;
            println!("{}", serde_json::to_string_pretty(&summary)?);
            db.close().await;
            if summary.status != "completed" {
                std::process::exit(1);
            }
        }
        Some(Command::Serve(args)) => {
            let served = Served {
                listen: cli.listen,
                name: cli.name,
                trusted,
                allow_private: cli.unsafe_allow_private_hosts,
            };
            serve(db, served, args).await?
        }
        None => {
            let served = Served {
                listen: cli.listen,
                name: cli.name,
                trusted,
                allow_private: cli.unsafe_allow_private_hosts,
            };
            serve(db, served, cli.serve).await?
        }
    }
    Ok(())
}

/// Serves the API on `listen`, with the daily scan when `--scan-at` is given.
/// The options of `serve` that every server has (the rest are in [`ServeArgs`]).
struct Served {
    listen: std::net::SocketAddr,
    name: String,
    trusted: lowdown_server::caller::TrustedProxies,
    allow_private: bool,
}

async fn serve(db: Db, served: Served, args: ServeArgs) -> anyhow::Result<()> {
    let Served {
        listen,
        name,
        trusted,
        allow_private,
    } = served;
    let listener = tokio::net::TcpListener::bind(listen)
        .await
        .with_context(|| format!("cannot listen on {listen}"))?;
    let backend = format!("{:?}", db.backend).to_lowercase();
    tracing::info!(listen = %listen, database = %backend, "lowdown-server ready");
    eprintln!("lowdown-server listening on http://{listen} ({backend})");
    let daily = args.scan_at.map(|at| {
        tracing::info!(at = %format!("{:02}:{:02}", at.hour, at.minute), "daily scan enabled (UTC)");
        let cfg = args.scan.config(scanner::progress::Mode::Log);
        tokio::spawn(scanner::schedule::daily(db.clone(), at, cfg))
    });
    if allow_private {
        tracing::warn!("--unsafe-allow-private-hosts: private hosts are stored and listed");
    }
    let state = AppState::new(db, name)
        .with_trusted_proxies(trusted)
        .with_private_hosts(allow_private);
    let served =
        lowdown_server::serve(listener, state, lowdown_server::serve::shutdown_signal()).await;
    if let Some(task) = daily {
        task.abort();
    }
    Ok(served?)
}
