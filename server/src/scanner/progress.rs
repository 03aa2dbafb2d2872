//! Progress of a scan on stderr: a bar with rate and ETA on a terminal, a plain line every
//! 10 seconds otherwise, `tracing` lines inside the server, or nothing (tests).

use std::io::{IsTerminal, Write};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// How progress is shown.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    /// A bar redrawn in place.
    Bar,
    /// A plain line every 10 s (stderr is not a terminal).
    Lines,
    /// `tracing` info lines every 30 s (inside `serve`).
    Log,
    /// Nothing.
    Quiet,
}

impl Mode {
    /// [`Mode::Bar`] when stderr is a terminal, else [`Mode::Lines`].
    pub fn for_stderr() -> Mode {
        if std::io::stderr().is_terminal() {
            Mode::Bar
        } else {
            Mode::Lines
        }
    }
}

/// Counters shared by the probes and the reporter.
#[derive(Debug)]
pub struct Progress {
    mode: Mode,
    total: AtomicUsize,
    done: AtomicUsize,
    running: AtomicUsize,
    hosts: AtomicUsize,
    probing: AtomicBool,
    started: Instant,
}

fn duration(secs: f64) -> String {
    let s = secs.round() as u64;
    if s >= 60 {
        format!("{}m{:02}s", s / 60, s % 60)
    } else {
        format!("{s}s")
    }
}

impl Progress {
    /// Shared counters for `mode`.
    pub fn new(mode: Mode) -> Arc<Progress> {
        Arc::new(Progress {
            mode,
            total: AtomicUsize::new(0),
            done: AtomicUsize::new(0),
            running: AtomicUsize::new(0),
            hosts: AtomicUsize::new(0),
            probing: AtomicBool::new(false),
            started: Instant::now(),
        })
    }

    /// Writes one line (after clearing a bar).
    pub fn note(&self, line: &str) {
        match self.mode {
            Mode::Bar => eprint!("\r\x1b[2K{line}\n"),
            Mode::Lines => eprintln!("{line}"),
            Mode::Log => tracing::info!("{line}"),
            Mode::Quiet => {}
        }
    }

    /// A Registry page was read.
    pub fn registry_page(&self, page: usize, entries: usize) {
        let line = format!("scan: Registry page {page} read, {entries} entries so far");
        match self.mode {
            Mode::Bar => {
                eprint!("\r\x1b[2K{line}");
                let _ = std::io::stderr().flush();
            }
            Mode::Lines | Mode::Log if page.is_multiple_of(25) => self.note(&line),
            _ => {}
        }
    }

    /// Probing starts: `total` remotes.
    pub fn start_probing(&self, total: usize) {
        self.total.store(total, Ordering::Relaxed);
        self.probing.store(true, Ordering::Relaxed);
    }

    /// One remote is done.
    pub fn probed(&self) {
        self.done.fetch_add(1, Ordering::Relaxed);
    }

    /// Probes running now, and hosts with probes running or queued.
    pub fn in_flight(&self, running: usize, hosts: usize) {
        self.running.store(running, Ordering::Relaxed);
        self.hosts.store(hosts, Ordering::Relaxed);
    }

    fn status(&self, elapsed: f64) -> (String, usize, usize) {
        let (done, total) = (
            self.done.load(Ordering::Relaxed),
            self.total.load(Ordering::Relaxed),
        );
        let rate = done as f64 / elapsed.max(0.001);
        let eta = if done > 0 && total > done {
            format!("ETA {}", duration((total - done) as f64 / rate))
        } else {
            "ETA -".to_owned()
        };
        (
            format!(
                "{done}/{total} remotes  {rate:.1}/s  {eta}  ({} in flight, {} hosts left)",
                self.running.load(Ordering::Relaxed),
                self.hosts.load(Ordering::Relaxed)
            ),
            done,
            total,
        )
    }

    /// Draws (or logs) the current state, at the mode's pace; call every 200 ms.
    fn draw(&self, probe_start: Instant, tick: u64) {
        if !self.probing.load(Ordering::Relaxed) {
            return;
        }
        let (text, done, total) = self.status(probe_start.elapsed().as_secs_f64());
        match self.mode {
            Mode::Bar => {
                let width = 30;
                let filled = (done * width).checked_div(total).unwrap_or(0);
                eprint!(
                    "\r\x1b[2Kscan: [{}{}] {text}",
                    "#".repeat(filled),
                    "-".repeat(width - filled)
                );
                let _ = std::io::stderr().flush();
            }
            Mode::Lines if tick.is_multiple_of(50) => eprintln!("scan: {text}"),
            Mode::Log if tick.is_multiple_of(150) => tracing::info!("scan: {text}"),
            _ => {}
        }
    }

    /// Ends the display with a last line.
    pub fn finish(&self) {
        if self.probing.load(Ordering::Relaxed) {
            let secs = self.started.elapsed().as_secs_f64();
            let (done, total) = (
                self.done.load(Ordering::Relaxed),
                self.total.load(Ordering::Relaxed),
            );
            self.note(&format!(
                "scan: done, {done}/{total} remotes in {} ({:.1}/s)",
                duration(secs),
                done as f64 / secs.max(0.001)
            ));
        }
    }
}

/// Redraws `progress` every 200 ms until dropped (abort the task).
pub fn spawn_reporter(progress: Arc<Progress>) -> tokio::task::JoinHandle<()> {
    tokio::spawn(async move {
        let mut tick = 0u64;
        let mut probe_start: Option<Instant> = None;
        loop {
            tokio::time::sleep(Duration::from_millis(200)).await;
            tick += 1;
            if progress.probing.load(Ordering::Relaxed) {
                let start = *probe_start.get_or_insert_with(Instant::now);
                progress.draw(start, tick);
            }
        }
    })
}
