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
    pub(crate) fn publish(&self, notice: &Notice) -> Result<String, String> {
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
        .map_err(|e| format!("cannot encode: {e}"))?;
        let request = crate::webhook::agent()
            .post(format!("{}/", self.topic.server))
            .header("Content-Type", "application/json")
            .header("User-Agent", crate::webhook::USER_AGENT);
        let request = match self.bearer() {
            Some(auth) => request.header("Authorization", &auth),
            None => request,
        };
        let answer = crate::webhook::answer(request.send(&body[..]))?;
        let sent: Message = serde_json::from_str(&answer.body)
            .map_err(|e| format!("the ntfy answer is not a message: {e}"))?;
        Ok(sent.id)
    }

    /// The reply topic's messages since `since` (a message id or Unix seconds).
    pub(crate) fn poll(&self, since: &str) -> Result<Vec<Message>, String> {
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
        let answer = crate::webhook::answer(request.call())?;
        Ok(answer
            .body
            .lines()
            .filter_map(|line| serde_json::from_str::<Message>(line).ok())
            .filter(|m| m.event == "message")
            .collect())
    }
}
