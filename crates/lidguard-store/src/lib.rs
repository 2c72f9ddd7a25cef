//! lidguard-store
