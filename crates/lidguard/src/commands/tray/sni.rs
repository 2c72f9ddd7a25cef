//! The Linux tray item: a StatusNotifierItem with its dbusmenu on the session bus (what KDE,
//! GNOME with the AppIndicator extension, Xfce, LXQt, Cinnamon and Waybar show), through ksni.
//! Menu clicks only send an [`Action`] to the tray's loop, which does the work.

use std::sync::mpsc::Sender;

use ksni::blocking::TrayMethods;
use ksni::menu::{RadioGroup, RadioItem, StandardItem, SubMenu};
use ksni::{Icon, MenuItem, Status, ToolTip};
use lidguard_core::settings::ClosedLidPermissionRequestDecision as Decision;

use super::view::{Mood, View};
use super::{Action, Wake};

/// The decisions in the order the menu lists them.
const DECISIONS: [(Decision, &str); 4] = [
    (Decision::Deny, "Deny (the agent moves on)"),
    (Decision::Allow, "Allow"),
    (Decision::Ask, "Ask me (the agent waits)"),
    (Decision::Remote, "Ask my phone"),
];

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
        let v = &self.view;
        let mut menu = vec![Item::text(v.headline.clone())];
        if v.mood == Mood::NoDaemon {
            menu.push(Item::action("Start the daemon", Action::StartDaemon, true));
        }
        if !v.sessions.is_empty() {
            menu.push(MenuItem::Separator);
            menu.extend(v.sessions.iter().cloned().map(Item::text));
        }
        menu.push(MenuItem::Separator);
        let live = v.mood != Mood::NoDaemon;
        if v.paused {
            menu.push(Item::action("Resume protection", Action::Resume, live));
        } else {
            menu.push(Item::action(
                "Pause protection for 30 min",
                Action::Pause(Some(30)),
                live,
            ));
            menu.push(Item::action(
                "Pause protection for 1 h",
                Action::Pause(Some(60)),
                live,
            ));
            menu.push(Item::action(
                "Pause protection until resumed",
                Action::Pause(None),
                live,
            ));
        }
        menu.push(Item::action(
            "Cancel the pending suspend",
            Action::CancelSuspend,
            v.suspend_pending,
        ));
        if let Some(current) = v.closed_lid {
            let selected = DECISIONS.iter().position(|(d, _)| *d == current);
            menu.push(
                SubMenu {
                    label: "Permission prompts with the lid closed".to_owned(),
                    submenu: vec![
                        RadioGroup {
                            selected: selected.unwrap_or_default(),
                            select: Box::new(|item: &mut Item, chosen| {
                                if let Some((decision, _)) = DECISIONS.get(chosen) {
                                    let _ =
                                        item.wakes.send(Wake::Action(Action::ClosedLid(*decision)));
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
                .into(),
            );
        }
        menu.push(MenuItem::Separator);
        menu.push(Item::action(
            "Open live-status",
            Action::OpenLiveStatus,
            true,
        ));
        menu.push(Item::action("Quit the tray", Action::Quit, true));
        menu
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

/// A disc in the mood's colour (with pause bars while paused), ARGB32 in network byte order
/// as the StatusNotifierItem specification asks.
fn icon(mood: Mood, size: i32) -> Icon {
    let [r, g, b] = mood.colour();
    let n = size as f32;
    let centre = (n - 1.0) / 2.0;
    let radius = n / 2.0 - 1.0;
    let mut data = Vec::with_capacity((size * size * 4) as usize);
    for y in 0..size {
        for x in 0..size {
            let (dx, dy) = (x as f32 - centre, y as f32 - centre);
            let distance = (dx * dx + dy * dy).sqrt();
            // Edge pixels partly covered, for a smooth rim.
            let cover = (radius - distance + 0.5).clamp(0.0, 1.0);
            let bar = mood == Mood::Paused
                && dy.abs() < n * 0.22
                && (dx.abs() - n * 0.11).abs() < n * 0.06;
            let (r, g, b) = if bar { (255, 255, 255) } else { (r, g, b) };
            data.extend([(cover * 255.0) as u8, r, g, b]);
        }
    }
    Icon {
        width: size,
        height: size,
        data,
    }
}
