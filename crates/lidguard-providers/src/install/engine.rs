//! The JSON edit engine shared by the Claude, Codex and Copilot installers.
//!
//! All three keep hooks under a top-level `hooks` object keyed by event name, each event an
//! array. Claude and Codex nest handlers inside matcher groups (`{"matcher"?, "hooks": [..]}`);
//! Copilot lists handlers directly. Edits go through `jsonc-parser`'s CST, property by
//! property, so everything not edited keeps its exact text.

use std::collections::HashSet;

use jsonc_parser::cst::{CstArray, CstInputValue, CstNode, CstObject, CstObjectProp, CstRootNode};
use serde_json::Value;

use super::duplicates::{self, Duplicate, DuplicateKeys};
use super::envelope::Envelope;
use super::jsonc::parse_options;
use super::{Change, ForeignHook, HookCommand, HookSource, HookStatus, InstallError, InstallState};

/// Where handlers sit under `hooks.<Event>`.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum Layout {
    /// `[{"matcher"?, "hooks": [handler, ..]}, ..]` (Claude, Codex).
    Nested,
    /// `[handler, ..]` (Copilot).
    Flat,
}

/// A handler lidguard writes, keys in the order written.
pub(crate) type Handler = Vec<(String, CstInputValue)>;

/// One provider's hook file.
pub(crate) struct Spec {
    /// The file in words, for parse errors.
    pub(crate) what: &'static str,
    /// The subcommand that marks lidguard's entries.
    pub(crate) subcommand: &'static str,
    /// The events lidguard needs, in the order they are added.
    pub(crate) events: &'static [&'static str],
    /// Nested or flat.
    pub(crate) layout: Layout,
    /// The handler for one event.
    pub(crate) handler: fn(&HookCommand, &str, u32) -> Handler,
    /// Whether another tool's handler of this type on this event can block, continue or
    /// answer what lidguard answers.
    pub(crate) conflicts: fn(event: &str, handler_type: &str) -> bool,
    /// Top-level keys the agent accepts, when it refuses files with others (Codex).
    pub(crate) root_keys: Option<&'static [&'static str]>,
    /// What the agent does with a key written twice.
    pub(crate) duplicates: DuplicateKeys,
    /// The `{"version": N, "hooks": …}` envelope, when the agent wants one (Copilot, Cursor).
    pub(crate) envelope: Option<Versioned>,
    /// What `hook-status` adds about the file's other settings (hooks turned off, …).
    pub(crate) warnings: Option<fn(&CstObject, &HookCommand) -> Vec<String>>,
    /// The events are the file's top-level keys (Droid's `hooks.json`), not inside `hooks`.
    pub(crate) at_root: bool,
}

impl Spec {
    /// The start of a file's description: what it is called, the subcommand that marks
    /// lidguard's entries and the events it needs; [`SpecName::handlers`] says how handlers sit
    /// per event.
    pub(crate) const fn named(
        what: &'static str,
        subcommand: &'static str,
        events: &'static [&'static str],
    ) -> SpecName {
        SpecName {
            what,
            subcommand,
            events,
        }
    }

    /// The agent refuses files with other top-level keys than these (Codex).
    pub(crate) const fn root_keys(mut self, keys: &'static [&'static str]) -> Self {
        self.root_keys = Some(keys);
        self
    }

    /// What the agent does with a key written twice (by default the last wins).
    pub(crate) const fn duplicates(mut self, duplicates: DuplicateKeys) -> Self {
        self.duplicates = duplicates;
        self
    }

    /// The `{"version": N, "hooks": …}` envelope the agent wants.
    pub(crate) const fn envelope(mut self, version: u32, refusal: &'static str) -> Self {
        self.envelope = Some(Versioned { version, refusal });
        self
    }

    /// The events are the file's top-level keys: the file is nothing but hooks.
    pub(crate) const fn events_at_root(mut self) -> Self {
        self.at_root = true;
        self
    }

    /// The keys whose duplicates matter: the events themselves when they are the top level.
    fn scope(&self) -> &'static [&'static str] {
        if self.at_root {
            self.events
        } else {
            HOOK_SCOPE
        }
    }

    /// The object holding the event arrays (`None`: no `hooks` yet); `create` adds `hooks`.
    fn events_object(
        &self,
        root: &CstObject,
        create: bool,
    ) -> Option<Result<CstObject, InstallError>> {
        if self.at_root {
            return Some(Ok(root.clone()));
        }
        match root.get("hooks") {
            None if create => Some(Ok(root.object_value_or_set("hooks"))),
            None => None,
            Some(prop) => Some(
                prop.object_value()
                    .ok_or_else(|| shape("hooks", "is not an object")),
            ),
        }
    }

    /// Where an event's array is, for messages.
    fn event_path(&self, event: &str) -> String {
        if self.at_root {
            event.to_owned()
        } else {
            format!("hooks.{event}")
        }
    }

    /// What `hook-status` adds about the file's other settings.
    pub(crate) const fn warnings(
        mut self,
        warnings: fn(&CstObject, &HookCommand) -> Vec<String>,
    ) -> Self {
        self.warnings = Some(warnings);
        self
    }
}

/// A [`Spec`] being described: its name, subcommand and events.
pub(crate) struct SpecName {
    what: &'static str,
    subcommand: &'static str,
    events: &'static [&'static str],
}

impl SpecName {
    /// Handlers laid out per event as `layout` says, without an envelope, in a file the agent
    /// reads whatever its other top-level keys, taking the last of a key written twice.
    pub(crate) const fn handlers(
        self,
        layout: Layout,
        handler: fn(&HookCommand, &str, u32) -> Handler,
        conflicts: fn(&str, &str) -> bool,
    ) -> Spec {
        Spec {
            what: self.what,
            subcommand: self.subcommand,
            events: self.events,
            layout,
            handler,
            conflicts,
            root_keys: None,
            duplicates: DuplicateKeys::LastWins,
            envelope: None,
            warnings: None,
            at_root: false,
        }
    }
}

/// The top-level keys whose duplicates matter to the hook installers.
const HOOK_SCOPE: &[&str] = &["hooks", "version"];

/// A parsed config file.
pub(crate) struct Doc {
    root: CstRootNode,
    envelope: Envelope,
    /// The file held no JSON value (missing, blank or only comments).
    was_empty: bool,
}

impl Doc {
    /// Parses `text`; a missing or blank file is an empty object.
    pub(crate) fn parse(text: Option<&str>, what: &str) -> Result<Self, InstallError> {
        // The parser accepts neither a BOM nor (for exact edits) mixed endings' guesswork.
        let (envelope, body) = Envelope::open(text.unwrap_or_default());
        let body: &str = if body.trim().is_empty() {
            "{}\n"
        } else {
            &body
        };
        let root = CstRootNode::parse(body, &parse_options()).map_err(|e| InstallError::Parse {
            what: what.to_owned(),
            line: e.line_display(),
            column: e.column_display(),
            message: e.kind().to_string(),
        })?;
        let was_empty = root.value().is_none() || text.is_none_or(|t| t.trim().is_empty());
        Ok(Self {
            root,
            envelope,
            was_empty,
        })
    }

    /// The keys written twice in `scope` (top-level keys and everything inside them).
    pub(crate) fn duplicates(&self, scope: &[&str]) -> Vec<Duplicate> {
        duplicates::find(&self.root.to_string(), scope)
    }

    /// Refuses the file when a key in `scope` is written twice.
    pub(crate) fn refuse_duplicates(
        &self,
        scope: &[&str],
        what: &str,
        agent: DuplicateKeys,
    ) -> Result<(), InstallError> {
        let found = self.duplicates(scope);
        if found.is_empty() {
            Ok(())
        } else {
            Err(duplicates::refusal(what, agent, &found))
        }
    }

    /// Whether the file held no JSON value before any edit.
    pub(crate) fn was_empty(&self) -> bool {
        self.was_empty
    }

    /// Whether the top level is now an object without properties.
    pub(crate) fn is_empty_object(&self) -> bool {
        self.root
            .object_value()
            .is_some_and(|o| o.properties().is_empty())
    }

    /// The top-level object (created when the file holds only comments).
    pub(crate) fn object(&self) -> Result<CstObject, InstallError> {
        match self.root.value() {
            None => Ok(self.root.object_value_or_set()),
            Some(value) => value
                .as_object()
                .ok_or_else(|| shape("(top level)", "is not a JSON object")),
        }
    }

    /// The file's text now.
    pub(crate) fn text(&self) -> String {
        self.envelope.close(&self.root.to_string())
    }

    /// `Unchanged` when the text is still `before`.
    pub(crate) fn change_from(&self, before: Option<&str>) -> Change {
        let new_text = self.text();
        if before == Some(new_text.as_str()) {
            Change::Unchanged
        } else {
            Change::Changed { new_text }
        }
    }
}

/// Whether the file turns off every hook in it (`"disableAllHooks": true`, which Claude Code
/// and Copilot CLI both honour).
pub(crate) fn all_hooks_disabled(root: &CstObject) -> bool {
    root.get("disableAllHooks")
        .and_then(|p| p.value()?.to_serde_value())
        == Some(Value::Bool(true))
}

pub(crate) fn shape(path: &str, message: &str) -> InstallError {
    InstallError::Shape {
        path: path.to_owned(),
        message: message.to_owned(),
    }
}

/// The text of an install into a missing file (which always parses and always changes).
pub(crate) fn fresh(change: Result<Change, InstallError>) -> String {
    match change {
        Ok(Change::Changed { new_text }) => new_text,
        other => {
            unreachable!("expected new text (as install into a missing file gives), got {other:?}")
        }
    }
}

/// Adds or corrects lidguard's entries in a missing (`None`), blank or existing file; the
/// timeout in seconds.
pub(crate) fn install(
    existing: Option<&str>,
    spec: &Spec,
    cmd: &HookCommand,
    timeout: u32,
) -> Result<Change, InstallError> {
    match &spec.envelope {
        Some(envelope) => install_versioned(existing, spec, cmd, timeout, envelope),
        None => install_plain(existing, spec, cmd, timeout),
    }
}

/// Removes lidguard's entries. `before` is the file as it was before lidguard's install, when
/// the caller knows it: containers it had stay even when empty.
pub(crate) fn remove(
    existing: &str,
    spec: &Spec,
    cmd: &HookCommand,
    before: Option<&str>,
) -> Result<Change, InstallError> {
    let scope: &[&str] = match spec.envelope {
        Some(_) => &["version", "hooks"],
        None => spec.scope(),
    };
    let doc = Doc::parse(Some(existing), spec.what)?;
    doc.refuse_duplicates(scope, spec.what, spec.duplicates)?;
    let root = doc.object()?;
    let removed = remove_from(&root, spec, cmd, &Keep::from_before(before, spec));
    Ok(match (&spec.envelope, before) {
        (Some(_), None) => versioned_leftover(&doc, &root, existing, removed),
        _ if removed => doc.change_back(existing, before),
        _ => Change::Unchanged,
    })
}

/// Compares the file with what [`install`] writes, with the spec's own warnings.
pub(crate) fn status(
    existing: Option<&str>,
    spec: &Spec,
    cmd: &HookCommand,
    timeout: u32,
) -> Result<HookStatus, InstallError> {
    let mut status = match &spec.envelope {
        Some(envelope) => status_versioned(existing, spec, cmd, timeout, envelope)?,
        None => status_plain(existing, spec, cmd, timeout)?,
    };
    if let Some(warnings) = spec.warnings {
        let root = existing
            .and_then(|t| Doc::parse(Some(t), spec.what).ok())
            .and_then(|doc| doc.object().ok());
        if let Some(root) = root {
            status.warnings.extend(warnings(&root, cmd));
        }
    }
    Ok(status)
}

/// What [`install`] writes into a missing file (which always parses and always changes).
pub(crate) fn fresh_text(spec: &Spec, cmd: &HookCommand, timeout: u32) -> String {
    fresh(install(None, spec, cmd, timeout))
}

fn install_plain(
    existing: Option<&str>,
    spec: &Spec,
    cmd: &HookCommand,
    timeout: u32,
) -> Result<Change, InstallError> {
    let doc = Doc::parse(existing, spec.what)?;
    doc.refuse_duplicates(spec.scope(), spec.what, spec.duplicates)?;
    install_into(&doc.object()?, spec, cmd, timeout)?;
    Ok(doc.change_from(existing))
}

impl Doc {
    /// The change after a removal: the text now, or `before` itself when what is left says
    /// exactly what `before` said — the same tokens and comments, only whitespace apart (the
    /// removal cannot know how a container that install expanded was laid out) — or when
    /// `before` held no JSON value and nothing is left (a blank or comment-only file).
    pub(crate) fn change_back(&self, existing: &str, before: Option<&str>) -> Change {
        let back = before.is_some_and(|before| {
            let (envelope, body) = Envelope::open(before);
            let now = self.root.to_string();
            (envelope == self.envelope && same_tokens(&now, &body))
                || (self.is_empty_object()
                    && Doc::parse(Some(before), "").is_ok_and(|b| b.was_empty()))
        });
        if let Some(before) = before.filter(|_| back) {
            return if before == existing {
                Change::Unchanged
            } else {
                Change::Changed {
                    new_text: before.to_owned(),
                }
            };
        }
        self.change_from(Some(existing))
    }
}

/// Whether two JSONC texts hold the same tokens and comments (whitespace aside).
fn same_tokens(a: &str, b: &str) -> bool {
    let options = jsonc_parser::CollectOptions {
        comments: jsonc_parser::CommentCollectionStrategy::AsTokens,
        tokens: true,
    };
    let tokens = |text| {
        jsonc_parser::parse_to_ast(text, &options, &parse_options())
            .ok()
            .and_then(|r| r.tokens)
            .map(|t| t.into_iter().map(|t| t.token).collect::<Vec<_>>())
    };
    match (tokens(a), tokens(b)) {
        (Some(x), Some(y)) => x == y,
        _ => false,
    }
}

/// The containers a file had before install, which remove must not prune.
#[derive(Default)]
pub(crate) struct Keep {
    /// `hooks` existed.
    hooks: bool,
    /// `hooks.<Event>` arrays that existed.
    events: HashSet<String>,
}

impl Keep {
    pub(crate) fn from_before(before: Option<&str>, spec: &Spec) -> Keep {
        let Some(doc) = before.and_then(|b| Doc::parse(Some(b), spec.what).ok()) else {
            return Keep::default();
        };
        let Some(hooks) = doc
            .root
            .object_value()
            .and_then(|root| spec.events_object(&root, false)?.ok())
        else {
            return Keep::default();
        };
        Keep {
            hooks: true,
            events: hooks
                .properties()
                .iter()
                .filter_map(CstObjectProp::decoded_name)
                .collect(),
        }
    }
}

/// A hooks file with a `{"version": N, "hooks": {...}}` envelope (Copilot, Cursor).
pub(crate) struct Versioned {
    /// The only version the agent reads.
    pub(crate) version: u32,
    /// Why another version is refused, in words.
    pub(crate) refusal: &'static str,
}

/// Install into a versioned file: the version goes first when missing, another version is
/// refused.
fn install_versioned(
    existing: Option<&str>,
    spec: &Spec,
    cmd: &HookCommand,
    timeout: u32,
    envelope: &Versioned,
) -> Result<Change, InstallError> {
    let doc = Doc::parse(existing, spec.what)?;
    doc.refuse_duplicates(&["version", "hooks"], spec.what, spec.duplicates)?;
    let root = doc.object()?;
    match root.get("version") {
        None => {
            root.insert(0, "version", CstInputValue::from(envelope.version));
        }
        Some(prop)
            if prop.value().and_then(|v| v.to_serde_value()) == Some(envelope.version.into()) => {}
        Some(_) => return Err(shape("version", envelope.refusal)),
    }
    install_into(&root, spec, cmd, timeout)?;
    Ok(doc.change_from(existing))
}

/// Status of a versioned file: a missing or other version is drift.
fn status_versioned(
    existing: Option<&str>,
    spec: &Spec,
    cmd: &HookCommand,
    timeout: u32,
    envelope: &Versioned,
) -> Result<HookStatus, InstallError> {
    let mut status = status_plain(existing, spec, cmd, timeout)?;
    if let Some(text) = existing.filter(|t| !t.trim().is_empty()) {
        let version = Doc::parse(Some(text), spec.what)?
            .object()?
            .get("version")
            .and_then(|p| p.value()?.to_serde_value());
        if version != Some(envelope.version.into()) {
            let found = version.map_or_else(|| "missing".to_owned(), |v| v.to_string());
            status
                .drift
                .push(format!("version: {found}, expected {}", envelope.version));
            if status.state == InstallState::Installed {
                status.state = InstallState::Drifted;
            }
        }
    }
    Ok(status)
}

/// What a removal leaves of a versioned file that lidguard created: `Delete` when nothing but
/// an empty envelope is left (when the file existed before lidguard's install, the caller's
/// `before` decides instead, as for a plain file).
fn versioned_leftover(doc: &Doc, root: &CstObject, existing: &str, removed: bool) -> Change {
    let empty = root.to_serde_value().is_some_and(|v| {
        v.as_object().is_some_and(|o| {
            o.iter().all(|(k, v)| match k.as_str() {
                "version" => true,
                "hooks" => v.as_object().is_some_and(serde_json::Map::is_empty),
                _ => false,
            })
        })
    });
    match (empty, removed) {
        (true, _) => Change::Delete,
        (false, true) => doc.change_from(Some(existing)),
        (false, false) => Change::Unchanged,
    }
}

/// Makes lidguard's entries in `root` exactly one canonical handler per required event.
///
/// The first lidguard handler of an event that runs for every matcher is kept in place and
/// corrected; any other lidguard handler is removed (with its group when that leaves the group
/// empty). An event without a kept handler gets a new group (or handler) at the end.
pub(crate) fn install_into(
    root: &CstObject,
    spec: &Spec,
    cmd: &HookCommand,
    timeout: u32,
) -> Result<(), InstallError> {
    check_root_keys(root, spec)?;
    let hooks = spec
        .events_object(root, true)
        .unwrap_or_else(|| Ok(root.object_value_or_set("hooks")))?;
    for event in spec.events {
        if hooks.get(event).is_some_and(|p| p.array_value().is_none()) {
            return Err(shape(&spec.event_path(event), "is not an array"));
        }
    }
    let mut kept = HashSet::new();
    for site in sites(&hooks, spec.layout)
        .into_iter()
        .filter(|s| s.is_ours(spec, cmd))
    {
        let required = spec.events.contains(&site.event.as_str());
        if required && site.runs_always() && kept.insert(site.event.clone()) {
            let want = (spec.handler)(cmd, &site.event, timeout);
            if site.value != to_value(&want) {
                conform(&site.handler, &want);
            }
        } else {
            // Keep the event array of a required event: the new entry goes into it, in place.
            site.remove(!required);
        }
    }
    for event in spec.events.iter().filter(|e| !kept.contains(**e)) {
        let handler = CstInputValue::Object((spec.handler)(cmd, event, timeout));
        let entry = match spec.layout {
            Layout::Nested => CstInputValue::Object(vec![(
                "hooks".to_owned(),
                CstInputValue::Array(vec![handler]),
            )]),
            Layout::Flat => handler,
        };
        hooks.array_value_or_set(event).append(entry);
    }
    Ok(())
}

/// Removes every lidguard handler; returns whether there was one. Containers in `keep` stay.
pub(crate) fn remove_from(root: &CstObject, spec: &Spec, cmd: &HookCommand, keep: &Keep) -> bool {
    let Some(Ok(hooks)) = spec.events_object(root, false) else {
        return false;
    };
    let mut removed = false;
    for site in sites(&hooks, spec.layout)
        .into_iter()
        .filter(|s| s.is_ours(spec, cmd))
    {
        let prune = !keep.events.contains(&site.event);
        site.remove(prune);
        removed = true;
    }
    if removed {
        for prop in hooks.properties() {
            if prop
                .decoded_name()
                .is_some_and(|n| keep.events.contains(&n))
                && prop.array_value().is_some_and(|a| a.elements().is_empty())
            {
                empty_container(&prop);
            }
        }
    }
    // The `hooks` key lidguard added goes with its last entry (a top level stays).
    if let Some(hooks_prop) = root.get("hooks").filter(|_| !spec.at_root)
        && removed
        && hooks.properties().is_empty()
    {
        if keep.hooks {
            empty_container(&hooks_prop);
        } else {
            hooks_prop.remove();
        }
    }
    removed
}

/// Writes an object or array that lost its last entry as `{}` / `[]`, the way an empty
/// container is usually written (the removal may have left the lines the entries were on).
pub(crate) fn empty_container(prop: &CstObjectProp) {
    if prop.object_value().is_some() {
        prop.set_value(CstInputValue::Object(Vec::new()));
    } else if prop.array_value().is_some() {
        prop.set_value(CstInputValue::Array(Vec::new()));
    }
}

/// Compares the file with what install would write.
fn status_plain(
    existing: Option<&str>,
    spec: &Spec,
    cmd: &HookCommand,
    timeout: u32,
) -> Result<HookStatus, InstallError> {
    let mut status = HookStatus::missing(spec.events);
    let Some(text) = existing.filter(|t| !t.trim().is_empty()) else {
        return Ok(status);
    };
    let doc = Doc::parse(Some(text), spec.what)?;
    let root = doc.object()?;
    let repeated = doc.duplicates(spec.scope());
    if !repeated.is_empty() {
        status
            .warnings
            .push(duplicates::warning(spec.duplicates, &repeated));
        match spec.duplicates {
            // Judge the copy the agent reads.
            DuplicateKeys::LastWins => duplicates::keep_last(&root, spec.scope()),
            // The agent runs nothing from this file.
            DuplicateKeys::FileIgnored => return Ok(status),
        }
    }
    if let Err(InstallError::Shape { path, message }) = check_root_keys(&root, spec) {
        status.drift.push(format!("{path}: {message}"));
    }
    let hooks = match spec.events_object(&root, false) {
        None => None,
        Some(Ok(hooks)) => Some(hooks),
        Some(Err(_)) => {
            status.drift.push("hooks: is not an object".to_owned());
            None
        }
    };
    let all = hooks
        .as_ref()
        .map(|h| sites(h, spec.layout))
        .unwrap_or_default();
    let (ours, theirs): (Vec<_>, Vec<_>) = all.into_iter().partition(|s| s.is_ours(spec, cmd));
    status.missing_events.clear();
    for site in &ours {
        status.saw_program(super::program_in(
            &command_text(&site.value),
            spec.subcommand,
        ));
    }
    for event in spec.events {
        let mine: Vec<&Site> = ours.iter().filter(|s| s.event == *event).collect();
        if mine.is_empty() {
            status.missing_events.push((*event).to_owned());
            if let Some(h) = &hooks
                && h.get(event).is_some_and(|p| p.array_value().is_none())
            {
                status
                    .drift
                    .push(format!("{}: is not an array", spec.event_path(event)));
            }
            continue;
        }
        match mine.iter().find(|s| s.runs_always()) {
            Some(site) => {
                let want = to_value(&(spec.handler)(cmd, event, timeout));
                status.drift.extend(differences(event, &site.value, &want));
            }
            None => status.drift.push(format!(
                "{event}: lidguard's hook runs only for matcher {}",
                mine[0]
                    .matcher
                    .as_ref()
                    .map_or_else(String::new, Value::to_string)
            )),
        }
        if mine.len() > 1 {
            status.drift.push(format!(
                "{event}: lidguard's hook is there {} times",
                mine.len()
            ));
        }
    }
    for site in ours
        .iter()
        .filter(|s| !spec.events.contains(&s.event.as_str()))
    {
        status.drift.push(format!(
            "{}: lidguard's hook on an event lidguard does not use",
            site.event
        ));
    }
    status.foreign_hooks = foreign(&theirs, spec, HookSource::Config);
    status.state = if ours.is_empty() {
        status.missing_events = spec.events.iter().map(|e| (*e).to_owned()).collect();
        InstallState::Missing
    } else if status.missing_events.is_empty() && status.drift.is_empty() {
        InstallState::Installed
    } else {
        InstallState::Drifted
    };
    Ok(status)
}

/// Refuses top-level keys the agent refuses (Codex: only `description` and `hooks`).
fn check_root_keys(root: &CstObject, spec: &Spec) -> Result<(), InstallError> {
    let Some(allowed) = spec.root_keys else {
        return Ok(());
    };
    for prop in root.properties() {
        let name = prop.decoded_name().unwrap_or_default();
        if !allowed.contains(&name.as_str()) {
            return Err(shape(
                &name,
                &format!(
                    "{} may hold only {} at the top level (otherwise the agent ignores the \
                     whole file); remove this key",
                    spec.what,
                    allowed.join(" and ")
                ),
            ));
        }
    }
    Ok(())
}

/// Programs that only notify the user: a hook running nothing else cannot answer for lidguard.
const NOTIFIERS: &[&str] = &[
    "notify-send",
    "terminal-notifier",
    "say",
    "afplay",
    "paplay",
    "aplay",
    "pw-play",
    "canberra-gtk-play",
    "spd-say",
];

/// The other tools' handlers among `sites` that conflict with lidguard's.
pub(crate) fn foreign(sites: &[Site], spec: &Spec, source: HookSource) -> Vec<ForeignHook> {
    sites
        .iter()
        .filter(|s| (spec.conflicts)(&s.event, s.handler_type()))
        .filter(|s| !s.only_notifies())
        .map(|s| ForeignHook {
            event: s.event.clone(),
            matcher: s
                .matcher
                .as_ref()
                .or(s.value.get("matcher"))
                .map(|m| m.as_str().map_or_else(|| m.to_string(), str::to_owned)),
            handler_type: s.handler_type().to_owned(),
            summary: s.summary(),
            source,
        })
        .collect()
}

/// One handler in the file, with the containers it sits in.
pub(crate) struct Site {
    pub(crate) event: String,
    event_prop: CstObjectProp,
    array: CstArray,
    /// The matcher group and its `hooks` array (nested layout only).
    group: Option<(CstObject, CstArray)>,
    /// The group's matcher (nested layout only).
    matcher: Option<Value>,
    handler: CstObject,
    pub(crate) value: Value,
}

/// Every handler object under `hooks`, in file order. Anything that is not an object where a
/// group or handler should be cannot be lidguard's and is left alone.
pub(crate) fn sites(hooks: &CstObject, layout: Layout) -> Vec<Site> {
    let mut out = Vec::new();
    for event_prop in hooks.properties() {
        let (Some(event), Some(array)) = (event_prop.decoded_name(), event_prop.array_value())
        else {
            continue;
        };
        for element in array.elements() {
            let Some(object) = element.as_object() else {
                continue;
            };
            let site = |group, matcher, handler: CstObject| Site {
                event: event.clone(),
                event_prop: event_prop.clone(),
                array: array.clone(),
                group,
                matcher,
                value: handler.to_serde_value().unwrap_or(Value::Null),
                handler,
            };
            match layout {
                Layout::Flat => out.push(site(None, None, object)),
                Layout::Nested => {
                    let Some(inner) = object.array_value("hooks") else {
                        continue;
                    };
                    let matcher = object
                        .get("matcher")
                        .and_then(|p| p.value())
                        .and_then(|v| v.to_serde_value());
                    for handler in inner.elements().iter().filter_map(CstNode::as_object) {
                        out.push(site(
                            Some((object.clone(), inner.clone())),
                            matcher.clone(),
                            handler,
                        ));
                    }
                }
            }
        }
    }
    out
}

impl Site {
    pub(crate) fn is_ours(&self, spec: &Spec, cmd: &HookCommand) -> bool {
        cmd.is_ours(&command_text(&self.value), spec.subcommand)
    }

    /// Whether the group's matcher lets the handler run for every occurrence of the event
    /// (absent, `""` or `"*"` in both Claude and Codex). A flat handler's own matcher is part
    /// of its value and so compared with the canonical handler instead.
    fn runs_always(&self) -> bool {
        match &self.matcher {
            None => true,
            Some(Value::String(m)) => m.is_empty() || m == "*",
            Some(_) => false,
        }
    }

    fn handler_type(&self) -> &str {
        self.value
            .get("type")
            .and_then(Value::as_str)
            .unwrap_or("command")
    }

    /// A command handler that only tells the user something — a desktop notification, a spoken
    /// word, a sound — and so cannot block or answer where lidguard does: the notifiers print
    /// nothing on stdout and exit 0. Anything else in the command (a pipe, a substitution, a
    /// redirection, another program) keeps it listed.
    fn only_notifies(&self) -> bool {
        if self.handler_type() != "command" {
            return false;
        }
        let Some(command) = ["command", "bash", "powershell"]
            .iter()
            .find_map(|k| self.value.get(*k).and_then(Value::as_str))
        else {
            return false;
        };
        if command.contains(['|', '`', '>', '<', '$', '\n']) {
            return false;
        }
        command
            .split([';', '&'])
            .map(str::trim)
            .filter(|part| !part.is_empty())
            .all(|part| {
                let program = part.split_whitespace().next().unwrap_or_default();
                let name = program.rsplit(['/', '\\']).next().unwrap_or(program);
                NOTIFIERS.contains(&name)
                    || (name == "osascript" && part.contains("display notification"))
            })
    }

    fn summary(&self) -> String {
        let text = |key: &str| {
            self.value
                .get(key)
                .and_then(Value::as_str)
                .map(str::to_owned)
        };
        ["command", "bash", "powershell", "url", "prompt"]
            .iter()
            .find_map(|k| text(k))
            .or_else(|| Some(format!("{} {}", text("server")?, text("tool")?)))
            .unwrap_or_else(|| self.value.to_string())
    }

    /// Removes the handler, then its group if that left the group empty, then (when `prune`)
    /// the event's array if that left it empty.
    fn remove(self, prune: bool) {
        self.handler.remove();
        if let Some((group, inner)) = self.group
            && inner.elements().is_empty()
        {
            group.remove();
        }
        if prune && self.array.elements().is_empty() {
            self.event_prop.remove();
        }
    }
}

/// Everything a handler would run, for the ownership test: the command fields of Claude, Codex
/// and Copilot handlers and the exec form's arguments.
fn command_text(handler: &Value) -> String {
    let mut parts: Vec<&str> = [
        "command",
        "bash",
        "powershell",
        "commandWindows",
        "command_windows",
        "exec",
    ]
    .iter()
    .filter_map(|k| handler.get(k).and_then(Value::as_str))
    .collect();
    if let Some(args) = handler.get("args").and_then(Value::as_array) {
        parts.extend(args.iter().filter_map(Value::as_str));
    }
    parts.join(" ")
}

/// Rewrites only the properties of `object` that differ from `want`, so a handler keeps its
/// layout (one line or several) and key order.
pub(crate) fn conform(object: &CstObject, want: &Handler) {
    for prop in object.properties() {
        let name = prop.decoded_name().unwrap_or_default();
        if !want.iter().any(|(k, _)| *k == name) {
            prop.remove();
        }
    }
    for (key, value) in want {
        match object.get(key) {
            Some(prop) => {
                if prop.value().and_then(|v| v.to_serde_value()) != Some(value_of(value)) {
                    prop.set_value(value.clone());
                }
            }
            None => {
                object.append(key, value.clone());
            }
        }
    }
}

/// What differs between a lidguard handler found and the one install writes, one line each.
fn differences(event: &str, found: &Value, want: &Value) -> Vec<String> {
    let (Some(found), Some(want)) = (found.as_object(), want.as_object()) else {
        return vec![format!("{event}: not an object")];
    };
    let mut out = Vec::new();
    for (key, expected) in want {
        let actual = found.get(key);
        if actual == Some(expected) {
            continue;
        }
        // A longer timeout than needed is fine (status accepts `>=`, as the reference system does); only
        // install writes the exact value.
        if matches!(key.as_str(), "timeout" | "timeoutSec")
            && let (Some(have), Some(need)) = (actual.and_then(Value::as_f64), expected.as_f64())
            && have >= need
        {
            continue;
        }
        let show = |v: &Value| v.as_str().map_or_else(|| v.to_string(), str::to_owned);
        out.push(match (key.as_str(), actual) {
            ("command" | "bash" | "powershell", Some(actual)) => {
                format!(
                    "{event}: runs {}, expected {}",
                    show(actual),
                    show(expected)
                )
            }
            ("timeout" | "timeoutSec", Some(actual)) => {
                format!(
                    "{event}: timeout {}, expected {}",
                    show(actual),
                    show(expected)
                )
            }
            (_, Some(actual)) => format!("{event}: {key} is {actual}, expected {expected}"),
            (_, None) => format!("{event}: no {key}, expected {expected}"),
        });
    }
    for (key, actual) in found.iter().filter(|(k, _)| !want.contains_key(*k)) {
        out.push(format!("{event}: unexpected {key} {actual}"));
    }
    out
}

/// The JSON value of a CST input (for comparing with what is in the file).
pub(crate) fn to_value(handler: &Handler) -> Value {
    Value::Object(
        handler
            .iter()
            .map(|(k, v)| (k.clone(), value_of(v)))
            .collect(),
    )
}

fn value_of(v: &CstInputValue) -> Value {
    match v {
        CstInputValue::Null => Value::Null,
        CstInputValue::Bool(b) => Value::Bool(*b),
        CstInputValue::Number(n) => serde_json::from_str(n).unwrap_or(Value::Null),
        CstInputValue::String(s) => Value::String(s.clone()),
        CstInputValue::Array(items) => Value::Array(items.iter().map(value_of).collect()),
        CstInputValue::Object(props) => to_value(props),
    }
}
