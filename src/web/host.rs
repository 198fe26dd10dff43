//! The names this server answers to: a request whose `Host` is not one of them is refused
//! (403), so that a web page on another site cannot read the database through DNS rebinding
//! (its own name made to resolve to 127.0.0.1). Accepted: `127.0.0.1`, `localhost` and
//! `[::1]`, the address the server is bound to (unless it is 0.0.0.0 or `::`), and the names
//! given with `--allow-host`; each with the server's port, or without a port when the port is
//! 80 (what a browser sends). A request without a `Host` is refused too.

use std::net::{IpAddr, SocketAddr};

/// The names a request's `Host` may give, and the port it must give.
#[derive(Clone, Debug)]
pub struct Hosts {
    names: Vec<String>,
    port: u16,
}

impl Hosts {
    /// The names of a server listening on `addr`, plus `allowed` (host names or addresses, as
    /// given to `--allow-host`).
    #[must_use]
    pub fn new(addr: SocketAddr, allowed: &[String]) -> Hosts {
        let mut names: Vec<String> = ["127.0.0.1", "localhost", "[::1]"]
            .iter()
            .map(|s| (*s).to_owned())
            .collect();
        if !addr.ip().is_unspecified() && !addr.ip().is_loopback() {
            names.push(literal(addr.ip()));
        }
        for a in allowed {
            names.push(normal_name(a));
        }
        Hosts {
            names,
            port: addr.port(),
        }
    }

    /// Whether `host` (a `Host` header's value, or a request target's authority) names this
    /// server.
    #[must_use]
    pub fn accepts(&self, host: &str) -> bool {
        let Some((name, port)) = split(host) else {
            return false;
        };
        let port_ok = match port {
            Some(p) => p == self.port,
            None => self.port == 80,
        };
        port_ok && self.names.contains(&name)
    }
}

/// An address as a `Host` header spells it (`[::1]` for IPv6).
fn literal(ip: IpAddr) -> String {
    match ip {
        IpAddr::V4(ip) => ip.to_string(),
        IpAddr::V6(ip) => format!("[{ip}]"),
    }
}

/// A name of `--allow-host` as it is compared: lower case, an IPv6 address in brackets, no
/// trailing dot.
fn normal_name(name: &str) -> String {
    let name = name.trim().trim_end_matches('.').to_ascii_lowercase();
    match name.parse::<IpAddr>() {
        Ok(ip) => literal(ip),
        Err(_) => name,
    }
}

/// A host and its port: `name`, `name:port`, `[v6]` or `[v6]:port`; `None` when malformed.
fn split(host: &str) -> Option<(String, Option<u16>)> {
    let host = host.trim();
    let (name, port) = if host.starts_with('[') {
        let end = host.find(']')?;
        let (name, rest) = host.split_at(end + 1);
        match rest {
            "" => (name, None),
            r => (name, Some(r.strip_prefix(':')?)),
        }
    } else {
        match host.rsplit_once(':') {
            Some((n, p)) => (n, Some(p)),
            None => (host, None),
        }
    };
    if name.is_empty() {
        return None;
    }
    let port = match port {
        Some(p) => Some(p.parse::<u16>().ok()?),
        None => None,
    };
    Some((normal_name(name), port))
}

/// A `--allow-host` value: a host name or an address, without a port.
pub fn parse_allowed(v: &str) -> Result<String, String> {
    let v = v.trim();
    let ok = !v.is_empty()
        && v.len() <= 253
        && (v.parse::<IpAddr>().is_ok()
            || v.chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '.'));
    if ok {
        Ok(v.to_owned())
    } else {
        Err(format!(
            "{v:?} is not a host name or an address (give it without a port or scheme, \
             e.g. chess.local or 192.168.1.5)"
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hosts(addr: &str, allowed: &[&str]) -> Hosts {
        let allowed: Vec<String> = allowed.iter().map(|s| (*s).to_owned()).collect();
        Hosts::new(addr.parse().unwrap(), &allowed)
    }

    #[test]
    fn loopback_names_with_the_port() {
        let h = hosts("127.0.0.1:8080", &[]);
        for ok in [
            "127.0.0.1:8080",
            "localhost:8080",
            "LOCALHOST:8080",
            "[::1]:8080",
        ] {
            assert!(h.accepts(ok), "{ok}");
        }
        for bad in [
            "evil.example:8080",
            "evil.example",
            "localhost",
            "127.0.0.1:8081",
            "localhost:",
            "",
            ":8080",
            "[::1",
            "127.0.0.1:8080:1",
            "localhost.evil.example:8080",
        ] {
            assert!(!h.accepts(bad), "{bad}");
        }
    }

    #[test]
    fn port_80_may_be_left_out() {
        let h = hosts("127.0.0.1:80", &[]);
        assert!(h.accepts("localhost") && h.accepts("localhost:80") && h.accepts("[::1]"));
        assert!(!h.accepts("localhost:8080"));
    }

    #[test]
    fn another_address_and_allowed_names() {
        let h = hosts("192.168.1.5:8080", &["Chess.Local.", "10.0.0.2", "::2"]);
        for ok in [
            "192.168.1.5:8080",
            "chess.local:8080",
            "10.0.0.2:8080",
            "[::2]:8080",
            "localhost:8080",
        ] {
            assert!(h.accepts(ok), "{ok}");
        }
        assert!(!h.accepts("other.local:8080"));
        let any = hosts("0.0.0.0:8080", &[]);
        assert!(!any.accepts("0.0.0.0:8080"));
        assert!(parse_allowed("chess.local").is_ok());
        assert!(parse_allowed("http://x").is_err() && parse_allowed("x:80").is_err());
    }
}
