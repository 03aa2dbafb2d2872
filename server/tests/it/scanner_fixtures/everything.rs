//! The real `@modelcontextprotocol/server-everything` (npm) as a child process, from the
//! workspace's `node_modules` (`npm ci` at the root, which `make setup` runs); killed on drop.
//!
//! It is told a port (`PORT`) picked free a moment before, and another test's connection
//! can take that port in between; the server still prints its ready line when its listen
//! failed. So a start counts only once the port answers, and a lost race starts it again on
//! another port.

use std::io::{BufRead, BufReader};
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

/// A running server-everything.
pub struct Everything {
    child: Child,
    pub port: u16,
    lines: mpsc::Receiver<String>,
}

impl Drop for Everything {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn entry_point() -> PathBuf {
    let p = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../node_modules/@modelcontextprotocol/server-everything/dist/index.js");
    assert!(
        p.exists(),
        "{} is missing: run `npm ci` at the root (make setup does)",
        p.display()
    );
    p
}

impl Everything {
    /// Starts `node index.js <mode>` on a free port, waits for its `ready` line and for the
    /// port to answer.
    pub async fn start(mode: &str, ready: &str) -> Everything {
        for _ in 0..5 {
            let e = Everything::spawn(mode, ready).await;
            if std::net::TcpStream::connect(("127.0.0.1", e.port)).is_ok() {
                return e;
            }
        }
        panic!("server-everything {mode} printed {ready:?} five times but never listened");
    }

    async fn spawn(mode: &str, ready: &str) -> Everything {
        let port = super::closed_port().await;
        let mut child = Command::new("node")
            .arg(entry_point())
            .arg(mode)
            .env("PORT", port.to_string())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("node runs");
        let (tx, lines) = mpsc::channel();
        for out in [
            Box::new(child.stdout.take().unwrap()) as Box<dyn std::io::Read + Send>,
            Box::new(child.stderr.take().unwrap()),
        ] {
            let tx = tx.clone();
            std::thread::spawn(move || {
                for line in BufReader::new(out).lines().map_while(Result::ok) {
                    let _ = tx.send(line);
                }
            });
        }
        let e = Everything { child, port, lines };
        let deadline = Instant::now() + Duration::from_secs(60);
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            match e.lines.recv_timeout(left) {
                Ok(line) if line.contains(ready) => return e,
                Ok(_) => {}
                Err(err) => panic!("server-everything {mode} did not start: {err}"),
            }
        }
    }

    /// Its streamable-HTTP endpoint.
    pub fn url(&self) -> String {
        format!("http://127.0.0.1:{}/mcp", self.port)
    }

    /// Every line printed since the last call.
    pub fn printed(&self) -> Vec<String> {
        self.lines.try_iter().collect()
    }
}
