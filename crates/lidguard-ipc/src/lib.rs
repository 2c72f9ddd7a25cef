//! lidguard-ipc
