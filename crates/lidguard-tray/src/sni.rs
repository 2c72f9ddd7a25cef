//! The Linux tray item: a StatusNotifierItem with its dbusmenu on the session bus (what KDE,
//! GNOME with the AppIndicator extension, Xfce, LXQt, Cinnamon and Waybar show), through ksni.
//! Menu clicks only send an [`Action`] to the tray's loop, which does the work.

use std::sync::mpsc::Sender;

use ksni::blocking::TrayMethods;
use ksni::menu::{RadioGroup, RadioItem, StandardItem, SubMenu};
use ksni::{Icon, MenuItem, Status, ToolTip};
use lidguard_core::settings::ClosedLidPermissionRequestDecision as Decision;

use super::menu::{self, CLOSED_LID_LABEL, DECISIONS, Entry};
use super::view::{Mood, View};
use super::{Action, Wake};

struct Item {
    view: View,
    wakes: Sender<Wake>,
}

impl Item {
    fn action(label: &str, action: Action, enabled: bool) -> MenuItem<Item> {
        StandardItem {
            label: label.to_owned(),
            enabled,
            activate: Box::new(move |item: &mut Item| {
                let _ = item.wakes.send(Wake::Action(action));
            }),
            ..Default::default()
        }
        .into()
    }

    fn text(label: String) -> MenuItem<Item> {
        StandardItem {
            label,
            enabled: false,
            ..Default::default()
        }
        .into()
    }
}

impl ksni::Tray for Item {
    const MENU_ON_ACTIVATE: bool = true;

    fn id(&self) -> String {
        "lidguard".to_owned()
    }

    fn title(&self) -> String {
        "lidguard".to_owned()
    }

    fn status(&self) -> Status {
        if self.view.mood.needs_attention() {
            Status::NeedsAttention
        } else if self.view.mood.active() {
            Status::Active
        } else {
            Status::Passive
        }
    }

    fn icon_pixmap(&self) -> Vec<Icon> {
        [22, 32, 48]
            .into_iter()
            .map(|size| icon(self.view.mood, size))
            .collect()
    }

    fn attention_icon_pixmap(&self) -> Vec<Icon> {
        self.icon_pixmap()
    }

    fn tool_tip(&self) -> ToolTip {
        let mut lines = self.view.detail.clone();
        lines.extend(self.view.note.clone());
        ToolTip {
            title: self.view.headline.clone(),
            description: lines.join("\n"),
            ..Default::default()
        }
    }

    fn menu(&self) -> Vec<MenuItem<Self>> {
        menu::entries(&self.view)
            .into_iter()
            .map(|entry| match entry {
                Entry::Text(label) => Item::text(label),
                Entry::Action {
                    label,
                    action,
                    enabled,
                } => Item::action(label, action, enabled),
                Entry::Separator => MenuItem::Separator,
                Entry::ClosedLid(current) => closed_lid(current),
            })
            .collect()
    }

    fn watcher_offline(&self, reason: ksni::OfflineReason) -> bool {
        tracing::warn!(
            ?reason,
            "no tray host on the session bus: the icon shows once one runs (GNOME needs the \
             AppIndicator extension)"
        );
        true
    }
}

/// The submenu of closed-lid decisions, `current` selected.
fn closed_lid(current: Decision) -> MenuItem<Item> {
    let selected = DECISIONS.iter().position(|(d, _)| *d == current);
    SubMenu {
        label: CLOSED_LID_LABEL.to_owned(),
        submenu: vec![
            RadioGroup {
                selected: selected.unwrap_or_default(),
                select: Box::new(|item: &mut Item, chosen| {
                    if let Some((decision, _)) = DECISIONS.get(chosen) {
                        let _ = item.wakes.send(Wake::Action(Action::ClosedLid(*decision)));
                    }
                }),
                options: DECISIONS
                    .iter()
                    .map(|(_, label)| RadioItem {
                        label: (*label).to_owned(),
                        ..Default::default()
                    })
                    .collect(),
            }
            .into(),
        ],
        ..Default::default()
    }
    .into()
}

/// The running item; [`Tray::show`] replaces what it shows.
pub(crate) struct Tray(ksni::blocking::Handle<Item>);

impl Tray {
    /// Puts the item on the session bus. It stays up without a tray host (one may start
    /// later, as at login).
    pub(crate) fn spawn(view: View, wakes: Sender<Wake>) -> anyhow::Result<Tray> {
        let handle = Item { view, wakes }
            .assume_sni_available(true)
            .spawn()
            .map_err(|e| {
                anyhow::anyhow!(
                    "cannot put the tray icon on the session bus: {e}. The tray needs a desktop \
                     session (DBUS_SESSION_BUS_ADDRESS); `lidguard live-status` works in any \
                     terminal"
                )
            })?;
        Ok(Tray(handle))
    }

    /// Shows `view` (the host is told only when something changed).
    pub(crate) fn show(&self, view: View) {
        self.0.update(|item| {
            if item.view != view {
                item.view = view;
            }
        });
    }

    /// Takes the item off the bus.
    pub(crate) fn close(self) {
        self.0.shutdown().wait();
    }
}

/// The mood's picture, ARGB32 in network byte order as the StatusNotifierItem specification
/// asks.
fn icon(mood: Mood, size: i32) -> Icon {
    let data = mood
        .picture(size)
        .into_iter()
        .flat_map(|[r, g, b, a]| [a, r, g, b])
        .collect();
    Icon {
        width: size,
        height: size,
        data,
    }
}
