//! Which IP addresses `web_fetch` reaches on the public internet and which belong to an
//! internal network (the machine itself, the local network, the cloud's metadata
//! service): judged on the address itself, IPv4 embedded in IPv6 (mapped, compatible,
//! NAT64, 6to4) judged as the IPv4 address it carries. It must not know hosts, rules or
//! HTTP.

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

/// What an address is, for `web_fetch`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Reach {
    /// On the public internet.
    Public,
    /// Not on the public internet: reached only when a rule names the host itself.
    Internal(Internal),
}

/// The kinds of address that are not on the public internet.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Internal {
    /// `127.0.0.0/8`, `::1`: this machine.
    Loopback,
    /// `169.254.0.0/16` (the cloud metadata address among them), `fe80::/10`.
    LinkLocal,
    /// `10/8`, `172.16/12`, `192.168/16`, `fc00::/7`, `fec0::/10`.
    Private,
    /// `100.64.0.0/10`: carrier-grade NAT.
    SharedNat,
    /// `0.0.0.0/8`, `::`.
    Unspecified,
    /// `224.0.0.0/4`, `ff00::/8`.
    Multicast,
    /// `255.255.255.255`.
    Broadcast,
    /// Reserved, documentation and benchmarking ranges (`240/4`, `192.0.0/24`,
    /// `198.18/15`, `192.0.2/24`, `198.51.100/24`, `203.0.113/24`, `100::/64`,
    /// `2001:db8::/32`).
    Reserved,
}

impl Internal {
    /// The kind in words: "a loopback address".
    pub fn describe(self) -> &'static str {
        match self {
            Internal::Loopback => "a loopback address (this machine)",
            Internal::LinkLocal => "a link-local address (the cloud metadata service lives there)",
            Internal::Private => "a private network address",
            Internal::SharedNat => "a carrier-grade NAT address",
            Internal::Unspecified => "an unspecified address",
            Internal::Multicast => "a multicast address",
            Internal::Broadcast => "the broadcast address",
            Internal::Reserved => "a reserved address",
        }
    }
}

/// What `ip` is.
pub fn reach(ip: IpAddr) -> Reach {
    match ip {
        IpAddr::V4(v4) => reach_v4(v4),
        IpAddr::V6(v6) => reach_v6(v6),
    }
}

fn reach_v4(ip: Ipv4Addr) -> Reach {
    let [a, b, c, _] = ip.octets();
    let internal = match (a, b, c) {
        (0, _, _) => Internal::Unspecified,
        (127, _, _) => Internal::Loopback,
        (169, 254, _) => Internal::LinkLocal,
        (10, _, _) | (192, 168, _) => Internal::Private,
        (172, 16..=31, _) => Internal::Private,
        (100, 64..=127, _) => Internal::SharedNat,
        (224..=239, _, _) => Internal::Multicast,
        (255, 255, 255) if ip == Ipv4Addr::BROADCAST => Internal::Broadcast,
        (240..=255, _, _) => Internal::Reserved,
        (192, 0, 0) | (192, 0, 2) | (198, 51, 100) | (203, 0, 113) => Internal::Reserved,
        (198, 18..=19, _) => Internal::Reserved,
        _ => return Reach::Public,
    };
    Reach::Internal(internal)
}

fn reach_v6(ip: Ipv6Addr) -> Reach {
    if let Some(v4) = embedded_v4(ip) {
        return reach_v4(v4);
    }
    let s = ip.segments();
    let internal = match s[0] {
        0 if ip == Ipv6Addr::UNSPECIFIED => Internal::Unspecified,
        0 if ip == Ipv6Addr::LOCALHOST => Internal::Loopback,
        0xfe80..=0xfebf => Internal::LinkLocal,
        0xfec0..=0xfeff | 0xfc00..=0xfdff => Internal::Private,
        0xff00..=0xffff => Internal::Multicast,
        // The local-use NAT64 prefix 64:ff9b:1::/48 translates into private networks.
        0x64 if s[1] == 0xff9b && s[2] == 1 => Internal::Private,
        0x100 if s[1..4] == [0, 0, 0] => Internal::Reserved,
        0x2001 if s[1] == 0xdb8 => Internal::Reserved,
        _ => return Reach::Public,
    };
    Reach::Internal(internal)
}

/// The IPv4 address an IPv6 address carries where the network delivers it to that IPv4
/// address: mapped `::ffff:a.b.c.d`, translated `::ffff:0:a.b.c.d`, compatible
/// `::a.b.c.d` (not `::` or `::1`), NAT64 `64:ff9b::a.b.c.d`, 6to4 `2002:AABB:CCDD::`.
fn embedded_v4(ip: Ipv6Addr) -> Option<Ipv4Addr> {
    let s = ip.segments();
    let o = ip.octets();
    let last = Ipv4Addr::new(o[12], o[13], o[14], o[15]);
    match s {
        [0, 0, 0, 0, 0, 0xffff, _, _] | [0, 0, 0, 0, 0xffff, 0, _, _] => Some(last),
        [0, 0, 0, 0, 0, 0, _, _] if ip != Ipv6Addr::UNSPECIFIED && ip != Ipv6Addr::LOCALHOST => {
            Some(last)
        }
        [0x64, 0xff9b, 0, 0, 0, 0, _, _] => Some(last),
        [0x2002, _, _, _, _, _, _, _] => Some(Ipv4Addr::new(o[2], o[3], o[4], o[5])),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn internal(text: &str) -> Internal {
        match reach(text.parse().unwrap()) {
            Reach::Internal(kind) => kind,
            Reach::Public => panic!("{text} was judged public"),
        }
    }

    #[test]
    fn every_internal_range_is_internal_at_both_ends() {
        for (text, kind) in [
            ("127.0.0.1", Internal::Loopback),
            ("127.255.255.254", Internal::Loopback),
            ("169.254.169.254", Internal::LinkLocal),
            ("169.254.0.0", Internal::LinkLocal),
            ("10.0.0.0", Internal::Private),
            ("10.255.255.255", Internal::Private),
            ("172.16.0.1", Internal::Private),
            ("172.31.255.255", Internal::Private),
            ("192.168.0.1", Internal::Private),
            ("100.64.0.1", Internal::SharedNat),
            ("100.127.255.255", Internal::SharedNat),
            ("0.0.0.0", Internal::Unspecified),
            ("0.1.2.3", Internal::Unspecified),
            ("224.0.0.1", Internal::Multicast),
            ("239.255.255.255", Internal::Multicast),
            ("255.255.255.255", Internal::Broadcast),
            ("240.0.0.1", Internal::Reserved),
            ("198.18.0.1", Internal::Reserved),
            ("192.0.2.1", Internal::Reserved),
            ("::1", Internal::Loopback),
            ("::", Internal::Unspecified),
            ("fe80::1", Internal::LinkLocal),
            ("febf::1", Internal::LinkLocal),
            ("fc00::1", Internal::Private),
            ("fd12:3456::1", Internal::Private),
            ("fec0::1", Internal::Private),
            ("ff02::1", Internal::Multicast),
            ("2001:db8::1", Internal::Reserved),
            ("64:ff9b:1::1", Internal::Private),
        ] {
            assert_eq!(internal(text), kind, "{text}");
        }
    }

    #[test]
    fn ipv4_carried_in_ipv6_is_judged_as_that_ipv4_address() {
        for (text, kind) in [
            ("::ffff:127.0.0.1", Internal::Loopback),
            ("::ffff:7f00:1", Internal::Loopback),
            ("::ffff:169.254.169.254", Internal::LinkLocal),
            ("::ffff:0:10.0.0.1", Internal::Private),
            ("::127.0.0.1", Internal::Loopback),
            ("::192.168.1.1", Internal::Private),
            ("::0.0.0.2", Internal::Unspecified),
            ("64:ff9b::127.0.0.1", Internal::Loopback),
            ("64:ff9b::a9fe:a9fe", Internal::LinkLocal),
            ("2002:7f00:1::", Internal::Loopback),
            ("2002:a00:1::1", Internal::Private),
        ] {
            assert_eq!(internal(text), kind, "{text}");
        }
        assert_eq!(
            reach("::ffff:93.184.215.14".parse().unwrap()),
            Reach::Public
        );
        assert_eq!(reach("2002:5db8:d70e::1".parse().unwrap()), Reach::Public);
    }

    #[test]
    fn public_addresses_next_to_the_ranges_are_public() {
        for text in [
            "1.1.1.1",
            "9.255.255.255",
            "11.0.0.0",
            "100.63.255.255",
            "100.128.0.0",
            "126.255.255.255",
            "128.0.0.0",
            "169.253.255.255",
            "172.15.255.255",
            "172.32.0.0",
            "192.167.255.255",
            "192.169.0.0",
            "223.255.255.255",
            "2606:4700::1111",
            "2a00:1450::1",
            "fbff::1",
        ] {
            assert_eq!(reach(text.parse().unwrap()), Reach::Public, "{text}");
        }
    }
}
