//! The phone's ntfy server and topic, as `ntfyUrl` names them.

use super::value::parse_webhook_url;

/// An ntfy server and topic, from `ntfyUrl`. Topic names are 1 to 64 of `A-Za-z0-9_-`
/// (ntfy's docs, "Publishing": topics are created on the fly and may use these characters).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NtfyTopic {
    /// The server's base URL without a trailing slash, e.g. `https://ntfy.sh`.
    pub server: String,
    /// The topic lidguard publishes to.
    pub topic: String,
}

impl NtfyTopic {
    /// The longest topic name ntfy accepts.
    pub const MAX_TOPIC: usize = 64;

    /// The topic as shown: anyone who knows its name can read the questions and answer them.
    pub const HIDDEN: &str = "(topic hidden)";

    /// Splits `https://host[:port][/prefix]/topic` into server and topic; `None` when it is
    /// not such a URL (a query, a fragment, credentials in the URL or a bad topic name).
    pub fn parse(text: &str) -> Option<NtfyTopic> {
        let url = parse_webhook_url(text)?;
        if url.query().is_some() || url.fragment().is_some() || !url.username().is_empty() {
            return None;
        }
        let path = url.path().trim_end_matches('/');
        let (prefix, topic) = path.rsplit_once('/')?;
        let name_ok = !topic.is_empty()
            && topic.len() <= Self::MAX_TOPIC - Self::REPLY_SUFFIX.len()
            && topic
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_');
        if !name_ok {
            return None;
        }
        let mut server = url.clone();
        server.set_path(prefix);
        Some(NtfyTopic {
            server: server.as_str().trim_end_matches('/').to_owned(),
            topic: topic.to_owned(),
        })
    }

    /// What is appended to the topic to name the reply topic.
    pub const REPLY_SUFFIX: &'static str = "-reply";

    /// The topic the phone's answers go to.
    pub fn reply_topic(&self) -> String {
        format!("{}{}", self.topic, Self::REPLY_SUFFIX)
    }

    /// `<server>/<topic>`.
    pub fn topic_url(&self, topic: &str) -> String {
        format!("{}/{topic}", self.server)
    }
}
