mod forge;
mod kubernetes;
mod parse;
mod resolve;

use crate::{Config, ConfigError};

/// The configuration `text` says; it must parse.
fn parse(text: &str) -> Config {
    match Config::parse(text) {
        Ok(p) => p.config,
        Err(e) => panic!("{text}: {e}"),
    }
}

/// Why `text` is refused; it must be.
fn refusal(text: &str) -> ConfigError {
    match Config::parse(text) {
        Ok(p) => panic!("{text} parsed: {p:?}"),
        Err(e) => e,
    }
}
