//! Loopback stand-ins for tests, the demo and benchmarks. Not built yet.
