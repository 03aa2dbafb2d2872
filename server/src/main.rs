//! The `lowdown-server` binary: `lowdown-server [serve] [--listen ADDR] [--db URL|PATH]
//! [--catalog FILE] [--gateway-listen ADDR] [--scan-at HH:MM]`, `lowdown-server scan [...]`,
//! `lowdown-server catalog add|list`, `lowdown-server export --out DIR`, or
//! `lowdown-server publish --out DIR`.

// Ingest allocates many small strings per record on several threads; mimalloc spends
// far less time in them than the system allocator (a third of ingest CPU in profiles).
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

use anyhow::Context;
use clap::Parser;
use lowdown_server::config::{self, CatalogCommand, Cli, Command};
use lowdown_server::db::{catalog, Db};
use lowdown_server::gateway::{self, catalog as services_toml, Prowl};
use lowdown_server::scanner::{self, cli::ServeArgs};
use lowdown_server::{clock, local_node, AppState};

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
    if let Ok(v) = std::env::var(clock::TEST_OFFSET_ENV) {
        let ms: i64 = v
            .parse()
            .with_context(|| format!("{}: expected milliseconds", clock::TEST_OFFSET_ENV))?;
        clock::set_process_offset(ms);
        tracing::warn!(
            offset_ms = ms,
            "{} is set: this server's clock is moved (tests only)",
            clock::TEST_OFFSET_ENV
        );
    }
    let trusted = lowdown_server::caller::TrustedProxies::parse(&cli.trusted_proxies)
        .map_err(anyhow::Error::msg)?;
    let limits = config::limits(&cli.quotas).map_err(anyhow::Error::msg)?;
    if cli.command.is_some() && cli.serve.any_given() {
        anyhow::bail!(
            "serve options (--gateway-listen, --gateway-timeout, --scan-at, --publish, --registry-url, \
             --cohort, --cohort-size, --modern, --concurrency, --per-host-concurrency, \
             --unsafe-allow-loopback, --local-node, \
             --idle-exit) go with no \
             subcommand or after the subcommand: `lowdown-server serve --gateway-listen ADDR`, \
             `lowdown-server scan --registry-url URL`"
        );
    }
    let home = config::lowdown_home(
        std::env::var(lowdown_core::defaults::HOME_ENV)
            .ok()
            .as_deref(),
        std::env::var("HOME").ok().as_deref(),
    );
    let catalog_path = cli
        .catalog
        .clone()
        .unwrap_or_else(|| home.join(services_toml::FILE_NAME));
    let explicit = cli.catalog.is_some();
    let mut export_to = None;
    let (serve_args, scan) = match cli.command {
        Some(Command::Catalog(cmd)) => return catalog_command(cmd, &catalog_path, explicit),
        Some(Command::Export { out }) => {
            export_to = Some(Written::Export(out));
            (cli.serve.clone(), None)
        }
        Some(Command::Publish { out }) => {
            export_to = Some(Written::Publish(out));
            (cli.serve.clone(), None)
        }
        Some(Command::Serve(args)) => (args, None),
        Some(Command::Scan(args)) => (cli.serve.clone(), Some(args)),
        None => (cli.serve.clone(), None),
    };
    let local = serve_args.node.local_node && scan.is_none() && export_to.is_none();
    // One local node per LOWDOWN_HOME: a second start leaves the first one serving.
    let claim = match local {
        true => match local_node::claim(&home)
            .with_context(|| format!("cannot lock {}", home.display()))?
        {
            Some(claim) => Some(claim),
            None => {
                eprintln!(
                    "lowdown-server: a local node already runs for {} (see {})",
                    home.display(),
                    home.join(lowdown_core::local_node::FILE_NAME).display()
                );
                return Ok(());
            }
        },
        false => None,
    };
    let mut trusted_networks = cli.trusted_networks.clone();
    if local {
        trusted_networks.extend(local_node::TRUSTED.map(String::from));
    }
    let trusted_networks = lowdown_server::caller::TrustedNetworks::parse(&trusted_networks)
        .map_err(anyhow::Error::msg)?;
    let services = services_toml::load(
        &catalog_path,
        explicit,
        serve_args.scan.unsafe_allow_loopback,
    )
    .map_err(anyhow::Error::msg)?;
    let url = config::database_url(
        cli.db.as_deref(),
        std::env::var("DATABASE_URL").ok().as_deref(),
        &home,
    );
    if url.starts_with("sqlite:") && cli.db.is_none() && std::env::var("DATABASE_URL").is_err() {
        let open = lowdown_server::files::prepare_home(&home)
            .with_context(|| format!("cannot create {}", home.display()))?;
        if let Some(w) = open {
            tracing::warn!("{w}");
        }
    }
    if let Some(w) = lowdown_server::files::prepare_sqlite(&url)
        .with_context(|| format!("cannot create the database of {url}"))?
    {
        tracing::warn!("{w}");
    }
    let db = Db::open(&url, 16).await?;
    match export_to {
        Some(Written::Export(out)) => {
            let done = lowdown_server::export::export(&db, &out, &cli.name).await;
            db.close().await;
            let done = done.with_context(|| format!("export to {}", out.display()))?;
            println!("{}", serde_json::to_string_pretty(&done)?);
            return Ok(());
        }
        Some(Written::Publish(out)) => {
            let done = lowdown_server::publish::publish(&db, &out, &cli.name).await;
            db.close().await;
            let done = done.with_context(|| format!("publish to {}", out.display()))?;
            println!("{}", serde_json::to_string_pretty(&done)?);
            return Ok(());
        }
        None => {}
    }
    // A --publish DIR that can never work stops the server now, not at the first scan.
    if let Some(dir) = &serve_args.publish {
        lowdown_server::publish::check(dir)
            .with_context(|| format!("--publish {}", dir.display()))?;
    }
    if !services.is_empty() {
        catalog::upsert(
            &db,
            services_toml::telemetry_services(&services),
            clock::now_ms(),
        )
        .await
        .map_err(|e| anyhow::anyhow!("{e}"))?;
        tracing::info!(services = services.len(), catalog = %catalog_path.display(), "catalog loaded");
    }
    if let Some(args) = scan {
        let cfg = args.config(scanner::progress::Mode::for_stderr());
        let summary = scanner::run(&db, &cfg).await?;
        println!("{}", serde_json::to_string_pretty(&summary)?);
        db.close().await;
        if summary.status != "completed" {
            std::process::exit(1);
        }
        return Ok(());
    }
    let served = Served {
        listen: cli.listen,
        name: cli.name,
        trusted,
        trusted_networks,
        limits,
        allow_private: cli.unsafe_allow_private_hosts,
        public_url: cli.public_url,
        retain_raw_days: cli.retain_raw_days,
        claim,
    };
    serve(db, served, services, serve_args).await
}

/// What a one-shot command writes.
enum Written {
    /// `export --out DIR`.
    Export(std::path::PathBuf),
    /// `publish --out DIR`.
    Publish(std::path::PathBuf),
}

/// The options of `serve` that every server has (the rest are in [`ServeArgs`]).
struct Served {
    listen: std::net::SocketAddr,
    name: String,
    trusted: lowdown_server::caller::TrustedProxies,
    trusted_networks: lowdown_server::caller::TrustedNetworks,
    limits: lowdown_server::db::quota::Limits,
    allow_private: bool,
    public_url: Option<String>,
    /// `--retain-raw-days`.
    retain_raw_days: u32,
    /// The local node's hold on LOWDOWN_HOME (`--local-node`), announced once listening.
    claim: Option<local_node::Claim>,
}

async fn serve(
    db: Db,
    served: Served,
    services: Vec<gateway::Service>,
    args: ServeArgs,
) -> anyhow::Result<()> {
    let Served {
        listen,
        name,
        trusted,
        trusted_networks,
        limits,
        allow_private,
        public_url,
        retain_raw_days,
        claim,
    } = served;
    let config = gateway::GatewayConfig {
        timeout: std::time::Duration::from_secs(args.gateway.gateway_timeout.max(1)),
        allow_loopback: args.scan.unsafe_allow_loopback,
    };
    let prowl = Prowl::new(services, config, |k| std::env::var(k).ok());
    for (slug, env) in prowl.missing_credentials() {
        tracing::warn!(%slug, %env, "vendor credential unset: gateway calls to this service answer 503");
    }
    let within = args
        .listen
        .limits(trusted.clone(), lowdown_server::listen::open_file_limit());
    let default_listen = listen.to_string() == config::DEFAULT_LISTEN;
    let listener = local_node::bind(listen, claim.is_some() && default_listen)
        .await
        .with_context(|| format!("cannot listen on {listen}"))?;
    let listen = listener.local_addr()?;
    if let Some(claim) = &claim {
        claim
            .announce(listen, &clock::iso(clock::now_ms()))
            .context("cannot announce the local node")?;
    }
    let backend = format!("{:?}", db.backend).to_lowercase();
    if allow_private {
        tracing::warn!("--unsafe-allow-private-hosts: private hosts are stored and listed");
    }
    let daily = args.scan_at.map(|at| {
        tracing::info!(at = %format!("{:02}:{:02}", at.hour, at.minute), "daily scan enabled (UTC)");
        let cfg = args.scan.config(scanner::progress::Mode::Log);
        let publish = args.publish.clone().map(|dir| {
            tracing::info!(dir = %dir.display(), "the dataset is published after each day's scan");
            scanner::schedule::PublishTo {
                dir,
                deployment: name.clone(),
            }
        });
        tokio::spawn(scanner::schedule::daily(db.clone(), at, cfg, publish))
    });
    let admin_token = lowdown_server::provider::auth::admin_token_from_env(
        std::env::var("LOWDOWN_ADMIN_TOKEN").ok(),
    )
    .map_err(anyhow::Error::msg)?;
    let state = AppState::new(db, name)
        .with_admin_token(admin_token)
        .with_prowl(prowl)
        .with_trusted_proxies(trusted)
        .with_trusted_networks(trusted_networks)
        .with_limits(limits)
        .with_private_hosts(allow_private)
        .with_public_url(public_url);
    let (stop, stopped) = tokio::sync::watch::channel(false);
    let until_stopped = move || {
        let mut rx = stopped.clone();
        async move {
            let _ = rx.wait_for(|s| *s).await;
        }
    };
    let stop = std::sync::Arc::new(stop);
    let on_signal = stop.clone();
    tokio::spawn(async move {
        lowdown_server::serve::shutdown_signal().await;
        let _ = on_signal.send(true);
    });
    let activity = args.node.idle().map(|after| {
        let activity = std::sync::Arc::new(local_node::Activity::default());
        let watched = activity.clone();
        tokio::spawn(async move {
            local_node::idle(watched, after).await;
            tracing::info!(
                seconds = after.as_secs(),
                "no request for --idle-exit: ending"
            );
            let _ = stop.send(true);
        });
        activity
    });
    tokio::spawn(gateway::audit::job(state.clone()));
    tokio::spawn(lowdown_server::retention::job(
        state.clone(),
        retain_raw_days,
    ));
    let gateway_task = match args.gateway.gateway_listen {
        Some(addr) => {
            let l = tokio::net::TcpListener::bind(addr)
                .await
                .with_context(|| format!("cannot listen on {addr} (--gateway-listen)"))?;
            eprintln!("lowdown-server gateway on http://{addr}");
            Some(tokio::spawn(gateway::cli::serve_gateway_within(
                l,
                state.clone(),
                within.clone(),
                until_stopped(),
            )))
        }
        None => None,
    };
    tracing::info!(listen = %listen, database = %backend, "lowdown-server ready");
    eprintln!("lowdown-server listening on http://{listen} ({backend})");
    if let Some(claim) = &claim {
        // What sessions spooled before the node answered: delivered to itself once serving.
        let (home, base) = (claim.home().to_owned(), format!("http://{listen}"));
        tokio::spawn(async move {
            let d = lowdown_server::drain::drain(&home, &base).await;
            if d.files > 0 {
                tracing::info!(files = d.files, records = d.records, "spool drained");
            }
        });
    }
    lowdown_server::serve_within(listener, state.clone(), within, activity, until_stopped())
        .await?;
    if let Some(t) = gateway_task {
        t.await??;
    }
    if let Some(task) = daily {
        task.abort();
    }
    // Every call that went through is stored before the process ends.
    state.prowl.recorder.flush().await;
    Ok(())
}

fn catalog_command(
    cmd: CatalogCommand,
    path: &std::path::Path,
    explicit: bool,
) -> anyhow::Result<()> {
    let services = match cmd {
        CatalogCommand::Add {
            slug,
            service_id,
            upstream,
            hosts,
            sampling_rate,
            allow,
            credential_mode,
            credential_header,
            credential_env,
            credential_format,
            service_name,
            public_key,
            unsafe_allow_loopback,
        } => {
            let credential = credential_header.map(|header| services_toml::Credential {
                mode: credential_mode,
                header,
                env: credential_env,
                format: credential_format,
            });
            // Checked again, with every other rule, when the whole file is parsed.
            let rules = lowdown_core::gateway::allow::GatewayRules::new(
                &allow,
                credential.as_ref().and_then(|c| c.mode.as_deref()),
                credential.as_ref().map(|c| c.header.as_str()),
            )?;
            let s = gateway::Service {
                name: service_name.unwrap_or_else(|| slug.clone()),
                slug,
                service_id,
                upstream,
                hosts,
                sampling_rate,
                allow,
                mode: rules.mode(),
                credential_header: credential.as_ref().map(|c| c.header.clone()),
                credential,
                rules,
                public_key,
                min_reputation: Default::default(),
            };
            services_toml::append(path, &s, unsafe_allow_loopback).map_err(anyhow::Error::msg)?
        }
        // Listing reads the file as written; loopback upstreams are shown, not refused.
        CatalogCommand::List => {
            services_toml::load(path, explicit, true).map_err(anyhow::Error::msg)?
        }
    };
    println!(
        "{}",
        serde_json::to_string_pretty(&serde_json::json!({"services": services}))?
    );
    Ok(())
}
