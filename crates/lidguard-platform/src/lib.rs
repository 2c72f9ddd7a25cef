//! lidguard-platform
