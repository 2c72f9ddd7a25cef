//! The macOS menu-bar item: an `NSStatusItem` whose image is the mood's disc (the same picture
//! as on Linux and Windows), whose tooltip is the headline and detail, and whose menu is the
//! shared [`menu::entries`]. Menu clicks only send an [`Action`] to the tray's loop.
//!
//! AppKit works on the main thread only. There the tray runs `NSApplication` as an accessory
//! (a menu-bar item, no Dock icon, no menu bar of its own); the tray's loop runs on a thread of
//! its own and hands each view to the main thread through GCD's main queue.
//!
//! Type-checked for both Apple targets; it runs only on a Mac, which CI does not have.

use std::cell::RefCell;
use std::process::ExitCode;
use std::sync::mpsc::Sender;

use anyhow::Context;
use dispatch2::DispatchQueue;
use objc2::rc::Retained;
use objc2::runtime::{AnyObject, NSObject};
use objc2::{
    AnyThread, DefinedClass, MainThreadMarker, MainThreadOnly, define_class, msg_send, sel,
};
use objc2_app_kit::{
    NSApplication, NSApplicationActivationPolicy, NSBitmapFormat, NSBitmapImageRep,
    NSControlStateValueOff, NSControlStateValueOn, NSDeviceRGBColorSpace, NSEvent,
    NSEventModifierFlags, NSEventType, NSImage, NSMenu, NSMenuItem, NSStatusBar, NSStatusItem,
    NSVariableStatusItemLength,
};
use objc2_foundation::{NSPoint, NSSize, NSString};

use super::menu::{self, CLOSED_LID_LABEL, DECISIONS, Entry};
use super::view::{Mood, View};
use super::{Action, Wake};

/// The image's size in points, and in pixels (two per point: sharp on Retina displays).
const POINTS: f64 = 16.0;
const PIXELS: i32 = 32;

define_class!(
    // SAFETY: NSObject has no subclassing requirements, and `MenuTarget` has no `Drop`.
    #[unsafe(super(NSObject))]
    #[thread_kind = MainThreadOnly]
    #[ivars = Sender<Wake>]
    struct MenuTarget;

    impl MenuTarget {
        /// An item was picked: its tag stands for its action ([`menu::tag`]).
        #[unsafe(method(picked:))]
        fn picked(&self, sender: &NSMenuItem) {
            if let Some(action) = menu::action_of(sender.tag()) {
                let _ = self.ivars().send(Wake::Action(action));
            }
        }
    }
);

impl MenuTarget {
    fn new(mtm: MainThreadMarker, wakes: Sender<Wake>) -> Retained<MenuTarget> {
        let this = MenuTarget::alloc(mtm).set_ivars(wakes);
        // SAFETY: NSObject's designated initialiser, the ivars set.
        unsafe { msg_send![super(this), init] }
    }
}

/// The item and what it shows, owned by the main thread.
struct Ui {
    mtm: MainThreadMarker,
    item: Retained<NSStatusItem>,
    target: Retained<MenuTarget>,
    shown: Option<View>,
}

thread_local! {
    /// The main thread's item (set while the tray runs).
    static UI: RefCell<Option<Ui>> = const { RefCell::new(None) };
}

impl Ui {
    fn new(mtm: MainThreadMarker, wakes: Sender<Wake>) -> Ui {
        let item = NSStatusBar::systemStatusBar().statusItemWithLength(NSVariableStatusItemLength);
        Ui {
            mtm,
            item,
            target: MenuTarget::new(mtm, wakes),
            shown: None,
        }
    }

    /// Shows `view` (nothing is redrawn when it did not change).
    fn show(&mut self, view: View) {
        if self.shown.as_ref() == Some(&view) {
            return;
        }
        if let Some(button) = self.item.button(self.mtm) {
            button.setImage(image(view.mood).as_deref());
            let mut lines = vec![view.headline.clone()];
            lines.extend(view.detail.iter().cloned());
            lines.extend(view.note.clone());
            button.setToolTip(Some(&NSString::from_str(&lines.join("\n"))));
        }
        self.item.setMenu(Some(&self.menu(&view)));
        self.shown = Some(view);
    }

    /// The menu of `view`.
    fn menu(&self, view: &View) -> Retained<NSMenu> {
        let mtm = self.mtm;
        let menu = NSMenu::new(mtm);
        // Items are enabled as the entries say, not by AppKit's validation.
        menu.setAutoenablesItems(false);
        for entry in menu::entries(view) {
            match entry {
                Entry::Text(label) => menu.addItem(&self.item_of(&label, None)),
                Entry::Action {
                    label,
                    action,
                    enabled,
                } => {
                    let item = self.item_of(label, Some(action));
                    item.setEnabled(enabled);
                    menu.addItem(&item);
                }
                Entry::Separator => menu.addItem(&NSMenuItem::separatorItem(mtm)),
                Entry::ClosedLid(current) => {
                    let submenu = NSMenu::new(mtm);
                    submenu.setAutoenablesItems(false);
                    for (decision, label) in DECISIONS {
                        let item = self.item_of(label, Some(Action::ClosedLid(decision)));
                        item.setState(if decision == current {
                            NSControlStateValueOn
                        } else {
                            NSControlStateValueOff
                        });
                        submenu.addItem(&item);
                    }
                    let parent = self.item_of(CLOSED_LID_LABEL, None);
                    parent.setEnabled(true);
                    parent.setSubmenu(Some(&submenu));
                    menu.addItem(&parent);
                }
            }
        }
        menu
    }

    /// An item titled `label`: greyed without an action, else sending it to the target.
    fn item_of(&self, label: &str, action: Option<Action>) -> Retained<NSMenuItem> {
        let title = NSString::from_str(label);
        let none = NSString::from_str("");
        let selector = action.map(|_| sel!(picked:));
        // SAFETY: `picked:` is the target's method, taking the item.
        let item = unsafe {
            NSMenuItem::initWithTitle_action_keyEquivalent(
                NSMenuItem::alloc(self.mtm),
                &title,
                selector,
                &none,
            )
        };
        match action {
            Some(action) => {
                let target: &AnyObject = &self.target;
                // SAFETY: the target lives as long as the item (the Ui keeps both).
                unsafe { item.setTarget(Some(target)) };
                item.setTag(menu::tag(action));
            }
            None => item.setEnabled(false),
        }
        item
    }
}

impl Drop for Ui {
    fn drop(&mut self) {
        NSStatusBar::systemStatusBar().removeStatusItem(&self.item);
    }
}

/// The mood's disc, [`PIXELS`]² pixels in a [`POINTS`]² image.
fn image(mood: Mood) -> Option<Retained<NSImage>> {
    let side = PIXELS as isize;
    // SAFETY: null planes: the rep allocates (and owns) its pixels; the colour space is
    // AppKit's constant.
    let rep = unsafe {
        NSBitmapImageRep::initWithBitmapDataPlanes_pixelsWide_pixelsHigh_bitsPerSample_samplesPerPixel_hasAlpha_isPlanar_colorSpaceName_bitmapFormat_bytesPerRow_bitsPerPixel(
            NSBitmapImageRep::alloc(),
            std::ptr::null_mut(),
            side,
            side,
            8,
            4,
            true,
            false,
            NSDeviceRGBColorSpace,
            NSBitmapFormat::AlphaNonpremultiplied,
            side * 4,
            32,
        )
    }?;
    let data = rep.bitmapData();
    if data.is_null() {
        return None;
    }
    let pixels = mood.picture(PIXELS);
    let bytes = pixels.as_flattened();
    // SAFETY: the rep's buffer holds `side` rows of `side * 4` bytes, as asked, which is
    // `bytes.len()`; it is not shared yet.
    unsafe { std::ptr::copy_nonoverlapping(bytes.as_ptr(), data, bytes.len()) };
    rep.setSize(NSSize::new(POINTS, POINTS));
    let image = NSImage::initWithSize(NSImage::alloc(), NSSize::new(POINTS, POINTS));
    image.addRepresentation(&rep);
    Some(image)
}

/// The tray's loop's handle on the item: each call is carried out on the main thread.
pub(crate) struct Tray(());

impl Tray {
    /// Shows `view`.
    pub(crate) fn show(&self, view: View) {
        DispatchQueue::main().exec_async(move || {
            UI.with(|ui| {
                if let Some(ui) = ui.borrow_mut().as_mut() {
                    ui.show(view);
                }
            });
        });
    }

    /// Ends the application's run loop; the item goes with it.
    pub(crate) fn close(self) {
        stop_app();
    }
}

/// Stops `NSApplication::run` from the main queue. A stop takes effect after the next event,
/// so one is posted.
fn stop_app() {
    DispatchQueue::main().exec_async(|| {
        // SAFETY: the main queue's work runs on the main thread.
        let mtm = unsafe { MainThreadMarker::new_unchecked() };
        let app = NSApplication::sharedApplication(mtm);
        app.stop(None);
        let event = NSEvent::otherEventWithType_location_modifierFlags_timestamp_windowNumber_context_subtype_data1_data2(
            NSEventType::ApplicationDefined,
            NSPoint::new(0.0, 0.0),
            NSEventModifierFlags::empty(),
            0.0,
            0,
            None,
            0,
            0,
            0,
        );
        if let Some(event) = event {
            app.postEvent_atStart(&event, true);
        }
    });
}

/// Shows `view` in the menu bar, runs `follow` (the tray's loop) on a thread of its own with
/// the handle, and AppKit here, on the main thread, until the loop ends.
pub(crate) fn run<F>(view: View, wakes: Sender<Wake>, follow: F) -> anyhow::Result<ExitCode>
where
    F: FnOnce(&Tray) -> anyhow::Result<ExitCode> + Send + 'static,
{
    let mtm = MainThreadMarker::new()
        .context("the menu-bar item can only be made on the process's main thread")?;
    let app = NSApplication::sharedApplication(mtm);
    // A menu-bar item only: no Dock icon, no menu bar of its own.
    app.setActivationPolicy(NSApplicationActivationPolicy::Accessory);
    let mut ui = Ui::new(mtm, wakes);
    ui.show(view);
    UI.with(|cell| *cell.borrow_mut() = Some(ui));
    let looping = std::thread::Builder::new()
        .name("tray".to_owned())
        .spawn(move || {
            let tray = Tray(());
            let outcome = follow(&tray);
            // However the loop ended, AppKit's ends too.
            tray.close();
            outcome
        })
        .context("cannot start the tray's loop")?;
    app.run();
    UI.with(|cell| drop(cell.borrow_mut().take()));
    looping
        .join()
        .map_err(|_| anyhow::anyhow!("the tray's loop panicked"))?
}
