//! Running rules code so that a bug in it (a panic) is an error for one command or one load,
//! never the end of the match's actor.

/// Runs rules code, turning a panic (a bug) into an error instead of the end of the actor.
pub fn guarded<T>(f: impl FnOnce() -> T) -> Result<T, String> {
    std::panic::catch_unwind(std::panic::AssertUnwindSafe(f)).map_err(|p| {
        p.downcast_ref::<&str>()
            .map(|s| (*s).to_string())
            .or_else(|| p.downcast_ref::<String>().cloned())
            .unwrap_or_else(|| "unknown panic".into())
    })
}
