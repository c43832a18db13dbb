//! Faults injected for the tests: a worker that kills itself (or, a
//! thread, fails), the chain's
//! thread panicking, a GPU fault. They are read from the environment only
//! in a build with the `fault-injection` feature (the tests' command turns
//! it on); a build for users reads no such variable.

/// The count a fault variable gives (`SEAMSTREAM_INJECT_…=N`: after N
/// frames); always `None` without the `fault-injection` feature.
pub fn after(var: &str) -> Option<u64> {
    given(var).and_then(|v| v.parse().ok())
}

#[cfg(feature = "fault-injection")]
thread_local! {
    static HERE: std::cell::RefCell<Vec<(String, String)>> =
        const { std::cell::RefCell::new(Vec::new()) };
}

/// Sets a fault variable for this thread alone, over the environment's (a
/// split job's worker that is a thread); nothing without the
/// `fault-injection` feature.
pub fn set_here(var: &str, value: &str) {
    #[cfg(feature = "fault-injection")]
    HERE.with(|h| h.borrow_mut().push((var.to_string(), value.to_string())));
    #[cfg(not(feature = "fault-injection"))]
    let _ = (var, value);
}

/// The text a fault variable gives (this thread's, else the
/// environment's); always `None` without the `fault-injection` feature.
pub fn given(var: &str) -> Option<String> {
    #[cfg(feature = "fault-injection")]
    {
        let here = HERE.with(|h| {
            h.borrow()
                .iter()
                .rev()
                .find(|(k, _)| k == var)
                .map(|(_, v)| v.clone())
        });
        here.or_else(|| std::env::var(var).ok())
    }
    #[cfg(not(feature = "fault-injection"))]
    {
        let _ = var;
        None
    }
}
