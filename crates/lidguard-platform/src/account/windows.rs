//! No Unix accounts here.

use super::Account;

/// None: there are no Unix accounts to look up.
pub fn by_name(_name: &str) -> Option<Account> {
    None
}
