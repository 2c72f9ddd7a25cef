//! The user database (`getpwnam_r`).

use super::Account;

/// The account named `name`, if there is one.
pub fn by_name(name: &str) -> Option<Account> {
    let user = nix::unistd::User::from_name(name).ok()??;
    Some(Account {
        home: user.dir,
        uid: user.uid.as_raw(),
        gid: user.gid.as_raw(),
    })
}
