//! The package sandbox (not built yet).
//!
//! The only crate that will spawn processes: running npm and PyPI MCP servers inside gVisor
//! (`runsc`) to list their tools, with decoys and traps, and parsing what the trace shows.
//!
//! Today it contains no code.
