//! The benchmarks' command line: `--name VALUE` flags (cargo adds `--bench`, which is ignored).

/// The value after `name` on the command line, else `default`.
pub(crate) fn flag<T: std::str::FromStr>(name: &str, default: T) -> T {
    let args: Vec<String> = std::env::args().skip(1).collect();
    args.iter()
        .position(|a| a == name)
        .and_then(|i| args.get(i + 1))
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}
