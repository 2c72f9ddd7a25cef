//! What the user chose about lidguard's hooks, remembered: an agent they unhooked on purpose
//! (`hook-remove`) is their choice, not a fault. `doctor` shows it without failing and `setup`
//! leaves it unhooked, until `hook-install` names it again. One private file,
//! `<state>/unhooked`, one provider per line.

use std::collections::BTreeSet;
use std::io;
use std::path::PathBuf;

use lidguard_core::provider::Provider;
use lidguard_ipc::Places;

fn file(places: &Places) -> PathBuf {
    places.state_dir.join("unhooked")
}

/// The agents the user unhooked on purpose.
pub fn unhooked(places: &Places) -> BTreeSet<Provider> {
    std::fs::read_to_string(file(places))
        .unwrap_or_default()
        .lines()
        .filter_map(|line| line.trim().parse().ok())
        .collect()
}

/// Remembers that the user unhooked `providers` (`unhooked: true`) or hooked them again.
pub fn set_unhooked(places: &Places, providers: &[Provider], unhooked_now: bool) -> io::Result<()> {
    let mut set = unhooked(places);
    let before = set.clone();
    for p in providers {
        if unhooked_now {
            set.insert(*p);
        } else {
            set.remove(p);
        }
    }
    if set == before {
        return Ok(());
    }
    if set.is_empty() {
        return match std::fs::remove_file(file(places)) {
            Err(e) if e.kind() != io::ErrorKind::NotFound => Err(e),
            _ => Ok(()),
        };
    }
    let text: String = set.iter().map(|p| format!("{}\n", p.as_str())).collect();
    lidguard_files::private::write(&file(places), text.as_bytes())
}
