//! What the small hook executable (`lidguard-hook`) and the full `lidguard` share: the hook
//! hot path. Keeping it here, apart from the CLI, the daemon and the MCP servers, lets the hook
//! executable link only what a hook needs, so it starts like a small program.

pub mod hook;
