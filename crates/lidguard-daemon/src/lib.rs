//! lidguard-daemon
