//! Sends the probe's requests: the core's [`Probe`] says what to send, this module moves the
//! bytes and reports back what came of it.

use std::time::{Duration, Instant};

use lowdown_core::scanner::probe::{BodyError, Method};
use lowdown_core::scanner::rpc::{AnswerReader, RpcMessage};
use lowdown_core::scanner::{Probe, ProbeResult, Reply, Request, Step, REQUEST_TIMEOUT_MS};
use reqwest::header::{CONTENT_TYPE, WWW_AUTHENTICATE};
use reqwest::Url;

use super::net::{error_type, Net};

/// Probes one remote: the URL rules first (a refused URL sends nothing), then the core's
/// sequence of requests, each under [`REQUEST_TIMEOUT_MS`].
pub async fn probe(net: &Net, url: &str, modern: bool) -> ProbeResult {
    let Ok(url) = net.check_url(url) else {
        return ProbeResult::blocked();
    };
    let mut probe = Probe::new(modern, env!("CARGO_PKG_VERSION"));
    let mut step = probe.start();
    loop {
        match step {
            Step::Done(result) => return result,
            Step::Send(req) => {
                let reply = send(net, &url, &req).await;
                step = probe.on_reply(reply);
            }
        }
    }
}

/// Sends one request and reads its answer when one is expected.
async fn send(net: &Net, url: &Url, req: &Request) -> Reply {
    let start = Instant::now();
    let mut builder = match req.method {
        Method::Post => net.client.post(url.clone()).body(req.body.clone()),
        Method::Delete => net.client.delete(url.clone()),
    };
    for (name, value) in &req.headers {
        builder = builder.header(*name, value);
    }
    // The timeout covers the whole exchange, body included.
    let builder = builder.timeout(Duration::from_millis(REQUEST_TIMEOUT_MS));
    let mut response = match builder.send().await {
        Ok(r) => r,
        Err(e) => return Reply::Failed(error_type(&e)),
    };
    let status = response.status().as_u16();
    let headers = response.headers();
    let session_id = headers
        .get("mcp-session-id")
        .and_then(|v| v.to_str().ok())
        .map(str::to_owned);
    let www_authenticate = headers.contains_key(WWW_AUTHENTICATE);
    let content_type = headers
        .get(CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .map(str::to_owned);
    let answer = match req.answer {
        Some((id, cap)) if (200..300).contains(&status) => {
            read_answer(
                &mut response,
                AnswerReader::new(content_type.as_deref(), id, cap),
            )
            .await
        }
        _ => Err(BodyError::NotRead),
    };
    Reply::Http {
        status,
        session_id,
        www_authenticate,
        elapsed_ms: start.elapsed().as_secs_f64() * 1000.0,
        answer,
    }
}

/// Reads body chunks into `reader` until the answer is complete, the body ends, or it
/// breaks off.
async fn read_answer(
    response: &mut reqwest::Response,
    mut reader: AnswerReader,
) -> Result<RpcMessage, BodyError> {
    loop {
        match response.chunk().await {
            Ok(Some(chunk)) => {
                if reader.feed(&chunk) {
                    break;
                }
            }
            Ok(None) => break,
            Err(e) => return Err(BodyError::Transport(error_type(&e))),
        }
    }
    reader.finish().map_err(BodyError::Answer)
}
