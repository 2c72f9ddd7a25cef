//! Displays from CoreGraphics.
//!
//! Facts (Apple's CoreGraphics reference): `CGGetOnlineDisplayList` lists the displays that are
//! online (active, mirrored or sleeping); `CGDisplayIsBuiltin` tells the built-in panel, which
//! is not counted as external.

use objc2_core_graphics::{CGDirectDisplayID, CGDisplayIsBuiltin, CGError, CGGetOnlineDisplayList};

/// The most displays asked for (more than any Mac drives).
const MAX_DISPLAYS: u32 = 32;

/// For each online display, whether it is built in; an error when CoreGraphics refuses (no
/// window server session).
pub(crate) fn online_builtin_flags() -> Result<Vec<bool>, String> {
    let mut ids: Vec<CGDirectDisplayID> = vec![0; MAX_DISPLAYS as usize];
    let mut count: u32 = 0;
    // SAFETY: `ids` holds MAX_DISPLAYS entries and `count` is a valid out-pointer.
    let err = unsafe { CGGetOnlineDisplayList(MAX_DISPLAYS, ids.as_mut_ptr(), &mut count) };
    if err != CGError::Success {
        return Err(format!("CGGetOnlineDisplayList failed: {}", err.0));
    }
    ids.truncate(count.min(MAX_DISPLAYS) as usize);
    Ok(ids.into_iter().map(|id| CGDisplayIsBuiltin(id)).collect())
}
