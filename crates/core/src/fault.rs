//! Faults injected for the tests: a worker that kills itself, the chain's
//! thread panicking, a GPU fault. They are read from the environment only
//! in a build with the `fault-injection` feature (the tests' command turns
//! it on); a build for users reads no such variable.

/// The count a fault variable gives (`SEAMSTREAM_INJECT_…=N`: after N
/// frames); always `None` without the `fault-injection` feature.
pub fn after(var: &str) -> Option<u64> {
    given(var).and_then(|v| v.parse().ok())
}

/// The text a fault variable gives; always `None` without the
/// `fault-injection` feature.
pub fn given(var: &str) -> Option<String> {
    #[cfg(feature = "fault-injection")]
    {
        std::env::var(var).ok()
    }
    #[cfg(not(feature = "fault-injection"))]
    {
        let _ = var;
        None
    }
}
