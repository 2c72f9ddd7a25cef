//! Kernel device events ("uevents", the netlink messages udev itself listens to): how the
//! daemon hears that a display was plugged or unplugged without reading `/sys` every few
//! seconds. The DRM driver sends a `change` event with `SUBSYSTEM=drm` (and `HOTPLUG=1`) when a
//! connector's status changes (kernel documentation, "DRM uevents"); any DRM event is taken as
//! "read the connectors again".

use std::io;
use std::os::fd::OwnedFd;

use rustix::net::netlink::SocketAddrNetlink;
use rustix::net::{AddressFamily, RecvFlags, SocketFlags, SocketType, netlink};
use tokio::io::Interest;
use tokio::io::unix::AsyncFd;

/// The multicast group of the kernel's own uevents (udev's rebroadcasts are group 2).
const KERNEL_GROUP: u32 = 1;

/// A subscription to the kernel's uevents.
#[derive(Debug)]
pub struct Uevents {
    fd: AsyncFd<OwnedFd>,
}

impl Uevents {
    /// Subscribes (no privilege needed to listen).
    pub fn open() -> io::Result<Uevents> {
        let fd = rustix::net::socket_with(
            AddressFamily::NETLINK,
            SocketType::DGRAM,
            SocketFlags::NONBLOCK | SocketFlags::CLOEXEC,
            Some(netlink::KOBJECT_UEVENT),
        )?;
        rustix::net::bind(&fd, &SocketAddrNetlink::new(0, KERNEL_GROUP))?;
        // SAFETY: `fd` is an open socket the AsyncFd owns from here on; it is closed only when
        // the AsyncFd drops, and `as_raw_fd` of an `OwnedFd` always returns that same fd.
        let fd = unsafe { AsyncFd::register_with_interest(fd, Interest::READABLE)? };
        Ok(Uevents { fd })
    }

    /// Waits for the next event of `subsystem` (others are read and dropped).
    pub async fn next_of(&mut self, subsystem: &str) -> io::Result<()> {
        self.next_of_any(&[subsystem]).await
    }

    /// Waits for the next event of any of `subsystems` (others are read and dropped).
    pub async fn next_of_any(&mut self, subsystems: &[&str]) -> io::Result<()> {
        let mut buf = vec![0u8; 8192];
        loop {
            let mut guard = self.fd.readable().await?;
            match rustix::net::recv(guard.get_inner(), &mut buf[..], RecvFlags::empty()) {
                Ok((n, _)) => {
                    let message = &buf[..n.min(buf.len())];
                    if subsystems.iter().any(|s| in_subsystem(message, s)) {
                        return Ok(());
                    }
                }
                Err(rustix::io::Errno::AGAIN) => guard.clear_ready(),
                Err(rustix::io::Errno::INTR) => {}
                // The queue overflowed: events were lost, so say "something changed".
                Err(rustix::io::Errno::NOBUFS) => return Ok(()),
                Err(e) => return Err(e.into()),
            }
        }
    }
}

/// Whether a uevent message (`ACTION@DEVPATH\0KEY=VALUE\0...`) is about `subsystem`.
pub fn in_subsystem(message: &[u8], subsystem: &str) -> bool {
    message
        .split(|b| *b == 0)
        .filter_map(|field| field.strip_prefix(b"SUBSYSTEM="))
        .any(|value| value == subsystem.as_bytes())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn drm_hotplug_messages_are_recognised() {
        // The shape of a connector hotplug event (kernel documentation, "DRM uevents").
        let hotplug = b"change@/devices/pci0000:00/0000:00:02.0/drm/card0\0ACTION=change\0DEVPATH=/devices/pci0000:00/0000:00:02.0/drm/card0\0SUBSYSTEM=drm\0HOTPLUG=1\0CONNECTOR=95\0DEVNAME=dri/card0\0SEQNUM=4242\0";
        assert!(in_subsystem(hotplug, "drm"));
        let other = b"change@/devices/virtual/mem/null\0ACTION=change\0SUBSYSTEM=mem\0";
        assert!(!in_subsystem(other, "drm"));
        assert!(!in_subsystem(b"garbage", "drm"));
        assert!(!in_subsystem(b"SUBSYSTEM=drmx\0", "drm"));
    }
}
