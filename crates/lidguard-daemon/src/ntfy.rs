//! The ntfy client: publish a notification, poll the reply topic. Blocking, 5 s per request
//! like every webhook (run it off the actor).
//!
//! Facts from ntfy's documentation (docs.ntfy.sh, "Publishing" and "Subscribing → Poll"):
//! - publish as JSON: `POST <server>/` with `{"topic", "title", "message", "priority" (1–5),
//!   "tags", "actions"}`; an `http` action is `{"action":"http", "label", "url", "method",
//!   "headers", "body", "clear"}` — the phone sends that request when the button is tapped;
//! - poll: `GET <server>/<topic>/json?poll=1&since=<id|unix time>` answers one JSON object per
//!   line and closes; messages have `"event":"message"`, an `id`, a `time` and the `message`;
//! - access tokens go in `Authorization: Bearer <token>`.

use crate::webhook::HttpError;
use std::io::BufRead;

use lidguard_core::remote::Notice;
use lidguard_core::settings::NtfyTopic;
use serde::{Deserialize, Serialize};

/// Where and how to reach the topic.
#[derive(Clone, Debug)]
pub(crate) struct Ntfy {
    /// Server and topic.
    pub(crate) topic: NtfyTopic,
    /// Access token (empty: none).
    pub(crate) token: String,
}

#[derive(Serialize)]
struct Publish<'a> {
    topic: &'a str,
    title: &'a str,
    message: &'a str,
    priority: u8,
    tags: &'a [&'a str],
    #[serde(skip_serializing_if = "Vec::is_empty")]
    actions: Vec<Action<'a>>,
}

#[derive(Serialize)]
struct Action<'a> {
    action: &'static str,
    label: &'a str,
    url: &'a str,
    method: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    headers: Option<Headers>,
    body: &'a str,
    clear: bool,
}

#[derive(Serialize)]
struct Headers {
    #[serde(rename = "Authorization")]
    authorization: String,
}

/// One message read from the reply topic.
#[derive(Clone, Debug, Deserialize)]
pub(crate) struct Message {
    /// ntfy's id for it.
    pub(crate) id: String,
    /// When the server took it, Unix seconds.
    #[serde(default)]
    pub(crate) time: i64,
    /// `message` for messages (also `open`, `keepalive`, `poll_request` on streams).
    #[serde(default)]
    pub(crate) event: String,
    /// The text.
    #[serde(default)]
    pub(crate) message: String,
}

impl Ntfy {
    /// From the settings, when a topic is set.
    pub(crate) fn from_settings(settings: &lidguard_core::settings::Settings) -> Option<Ntfy> {
        Some(Ntfy {
            topic: settings.ntfy()?,
            token: settings.ntfy_token.clone(),
        })
    }

    fn bearer(&self) -> Option<String> {
        (!self.token.is_empty()).then(|| format!("Bearer {}", self.token))
    }

    /// Publishes `notice`; its buttons post their bodies to the reply topic. Returns ntfy's
    /// id for the message.
    pub(crate) fn publish(&self, notice: &Notice) -> Result<String, HttpError> {
        let reply_url = self.topic.topic_url(&self.topic.reply_topic());
        let actions = notice
            .buttons
            .iter()
            .map(|b| Action {
                action: "http",
                label: b.label,
                url: &reply_url,
                method: "POST",
                // A protected reply topic needs the token from the phone too.
                headers: self.bearer().map(|authorization| Headers { authorization }),
                body: &b.body,
                clear: true,
            })
            .collect();
        let body = serde_json::to_vec(&Publish {
            topic: &self.topic.topic,
            title: &notice.title,
            message: &notice.message,
            priority: notice.priority,
            tags: &notice.tags,
            actions,
        })
        .map_err(HttpError::Encode)?;
        let request = crate::webhook::agent()
            .post(format!("{}/", self.topic.server))
            .header("Content-Type", "application/json")
            .header("User-Agent", crate::webhook::USER_AGENT);
        let request = match self.bearer() {
            Some(auth) => request.header("Authorization", &auth),
            None => request,
        };
        let answer = crate::webhook::answer(request.send(&body[..]))?;
        let sent: Message =
            serde_json::from_str(&answer.body).map_err(|source| HttpError::Decode {
                what: "the ntfy answer is not a message",
                source,
            })?;
        Ok(sent.id)
    }

    /// The reply topic's messages since `since` (a message id or Unix seconds), one page: at most
    /// [`PAGE_BYTES`] are read, and lines over [`LINE_BYTES`] (no reply is that long) are skipped
    /// unread. A backlog of junk on the topic then costs a few pages, never every later answer.
    pub(crate) fn poll(&self, since: &str) -> Result<Page, HttpError> {
        let url = format!(
            "{}/json?poll=1&since={since}",
            self.topic.topic_url(&self.topic.reply_topic())
        );
        let request = crate::webhook::agent()
            .get(&url)
            .header("User-Agent", crate::webhook::USER_AGENT);
        let request = match self.bearer() {
            Some(auth) => request.header("Authorization", &auth),
            None => request,
        };
        let mut response = request.call()?;
        let status = response.status().as_u16();
        if !(200..300).contains(&status) {
            return Err(HttpError::Status {
                who: "ntfy server",
                status,
            });
        }
        let reader = std::io::BufReader::new(response.body_mut().as_reader());
        read_page(reader).map_err(|source| HttpError::Read {
            what: "the reply topic",
            source,
        })
    }
}

/// Whether the phone's ntfy server answers and lets lidguard read its reply topic (the same
/// poll the daemon makes, for the last second: nothing is published, nothing reaches the
/// phone); `None` without a topic. For `doctor`.
pub fn probe(settings: &lidguard_core::settings::Settings) -> Option<Result<(), HttpError>> {
    let ntfy = Ntfy::from_settings(settings)?;
    Some(ntfy.poll("1s").map(|_| ()))
}

/// The most of the reply topic one poll reads.
pub(crate) const PAGE_BYTES: usize = 256 * 1024;

/// The longest line of the reply topic that is read (ntfy keeps messages to 4 KiB).
pub(crate) const LINE_BYTES: usize = 16 * 1024;

/// One poll's messages, and whether the page was full (more may wait).
#[derive(Debug, Default)]
pub(crate) struct Page {
    pub(crate) messages: Vec<Message>,
    pub(crate) more: bool,
}

/// Reads message lines until the end or a full page.
fn read_page(mut reader: impl std::io::BufRead) -> std::io::Result<Page> {
    let mut page = Page::default();
    let mut read = 0;
    let mut line = Vec::new();
    loop {
        if read >= PAGE_BYTES {
            page.more = true;
            return Ok(page);
        }
        line.clear();
        let n =
            std::io::Read::take(&mut reader, LINE_BYTES as u64 + 1).read_until(b'\n', &mut line)?;
        if n == 0 {
            return Ok(page);
        }
        read += n;
        if line.len() > LINE_BYTES && !line.ends_with(b"\n") {
            // Too long to be a reply: skip to its end without keeping it.
            loop {
                let buffer = reader.fill_buf()?;
                if buffer.is_empty() {
                    return Ok(page);
                }
                let (used, done) = match buffer.iter().position(|b| *b == b'\n') {
                    Some(at) => (at + 1, true),
                    None => (buffer.len(), false),
                };
                reader.consume(used);
                read += used;
                if done {
                    break;
                }
            }
            continue;
        }
        if let Ok(message) = serde_json::from_slice::<Message>(&line)
            && message.event == "message"
        {
            page.messages.push(message);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn line(id: usize, text: &str) -> String {
        format!(
            "{}\n",
            serde_json::json!({"id": format!("m{id}"), "time": 1, "event": "message", "message": text})
        )
    }

    #[test]
    fn a_large_backlog_is_read_in_pages_and_oversized_lines_are_skipped() {
        let junk = "x".repeat(4000);
        let mut body = String::new();
        body.push_str(&format!("{}\n", "y".repeat(LINE_BYTES * 3)));
        for i in 0..1300 {
            body.push_str(&line(i, &junk));
        }
        body.push_str(&line(9999, "CODE allow"));
        let first = read_page(body.as_bytes()).unwrap();
        assert!(first.more);
        assert!(
            first.messages.len() > 40 && first.messages.len() < 70,
            "{}",
            first.messages.len()
        );
        assert_eq!(first.messages[0].id, "m0", "the long line was skipped");
        // Later pages go on from the last id read; the last one ends with the answer.
        let rest: String = body
            .lines()
            .skip_while(|l| !l.contains(&format!("\"m{}\"", 1299)))
            .map(|l| format!("{l}\n"))
            .collect();
        let last = read_page(rest.as_bytes()).unwrap();
        assert!(!last.more);
        assert_eq!(last.messages.last().unwrap().message, "CODE allow");
    }
}
