//! The body deadline: a request body arrives in full within a time from its head, or the
//! answer is `408` and the connection closes.

use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::Duration;

use axum::body::{Body, Bytes};
use axum::extract::Request;
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use axum::Router;
use hyper::body::{Body as HttpBody, Frame, SizeHint};
use tokio::time::Sleep;

use crate::error::AppError;

/// `router` with every request body held to `limit`.
pub fn with_deadline(router: Router, limit: Duration) -> Router {
    router.layer(axum::middleware::from_fn(move |req, next| {
        deadline(limit, req, next)
    }))
}

async fn deadline(limit: Duration, req: Request, next: Next) -> Response {
    let late = Arc::new(AtomicBool::new(false));
    let req = req.map(|inner| {
        Body::new(Deadline {
            inner,
            sleep: Box::pin(tokio::time::sleep(limit)),
            late: late.clone(),
        })
    });
    let response = next.run(req).await;
    if late.load(Ordering::Relaxed) {
        return AppError::RequestTimeout {
            limit_secs: limit.as_secs(),
        }
        .into_response();
    }
    response
}

/// A body that fails once its deadline passes, and says so through `late`.
struct Deadline {
    inner: Body,
    sleep: Pin<Box<Sleep>>,
    late: Arc<AtomicBool>,
}

impl HttpBody for Deadline {
    type Data = Bytes;
    type Error = axum::Error;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, Self::Error>>> {
        if self.sleep.as_mut().poll(cx).is_ready() {
            self.late.store(true, Ordering::Relaxed);
            return Poll::Ready(Some(Err(axum::Error::new("request body deadline passed"))));
        }
        Pin::new(&mut self.inner).poll_frame(cx)
    }

    fn is_end_stream(&self) -> bool {
        self.inner.is_end_stream()
    }

    fn size_hint(&self) -> SizeHint {
        self.inner.size_hint()
    }
}
