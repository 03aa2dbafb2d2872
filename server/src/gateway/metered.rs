//! The response body as it streams to the agent: passed through chunk by chunk (never
//! buffered), counted, and recorded as one ProxyCall when it ends, fails or is dropped.

use std::pin::Pin;
use std::task::{Context, Poll};
use std::time::Instant;

use axum::body::Bytes;
use futures_util::Stream;

use crate::db::gateway::calls::ProxyCall;
use crate::db::Db;
use crate::gateway::Prowl;

type Inner = Pin<Box<dyn Stream<Item = Result<Bytes, reqwest::Error>> + Send>>;

/// A streaming body that records its ProxyCall when done.
pub struct Metered {
    inner: Inner,
    bytes: u64,
    /// The body's declared length: a server reads exactly that much and may drop the
    /// stream without polling its end, so reaching it is the end.
    expected: Option<u64>,
    started: Instant,
    call: Option<ProxyCall>,
    db: Db,
    prowl: std::sync::Arc<Prowl>,
}

impl Metered {
    /// Streams `inner` (of `expected` bytes when declared); `call` is completed (latency,
    /// bytes, error) and stored at the end. A body declared empty ends at once.
    pub fn new(
        inner: Inner,
        expected: Option<u64>,
        started: Instant,
        call: ProxyCall,
        db: Db,
        prowl: std::sync::Arc<Prowl>,
    ) -> Metered {
        let mut m = Metered {
            inner,
            bytes: 0,
            expected,
            started,
            call: Some(call),
            db,
            prowl,
        };
        if expected == Some(0) {
            m.finish(None);
        }
        m
    }

    fn finish(&mut self, error_type: Option<&str>) {
        if let Some(mut call) = self.call.take() {
            call.latency_ms = self.started.elapsed().as_secs_f64() * 1000.0;
            call.response_bytes = Some(self.bytes);
            call.error_type = error_type.map(str::to_owned);
            self.prowl.recorder.record(&self.db, call);
        }
    }
}

impl Stream for Metered {
    type Item = Result<Bytes, std::io::Error>;

    fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        match self.inner.as_mut().poll_next(cx) {
            Poll::Ready(Some(Ok(b))) => {
                self.bytes += b.len() as u64;
                if self.expected.is_some_and(|n| self.bytes >= n) {
                    self.finish(None);
                }
                Poll::Ready(Some(Ok(b)))
            }
            Poll::Ready(Some(Err(e))) => {
                let kind = if e.is_timeout() {
                    "timeout"
                } else {
                    "upstream_body"
                };
                self.finish(Some(kind));
                Poll::Ready(Some(Err(std::io::Error::other(kind))))
            }
            Poll::Ready(None) => {
                self.finish(None);
                Poll::Ready(None)
            }
            Poll::Pending => Poll::Pending,
        }
    }
}

impl Drop for Metered {
    fn drop(&mut self) {
        // Dropped before the end: the agent went away mid-body.
        self.finish(Some("client_gone"));
    }
}
