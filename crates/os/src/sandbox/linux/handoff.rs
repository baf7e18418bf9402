//! The proxy's listener, and one for each loopback address `[sandbox]
//! allow` names, made in a confined child's own network namespace and
//! handed to planwright over a socket pair prepared before the fork
//! (`SCM_RIGHTS`), so planwright can serve the child from outside it.
//!
//! [`ListenerSetup::enter`] runs in the forked child: plain system calls
//! on data prepared in the parent (the control message's buffer too).

use rustix::net::{
    AddressFamily, RecvAncillaryBuffer, RecvAncillaryMessage, RecvFlags, SendAncillaryBuffer,
    SendAncillaryMessage, SendFlags, SocketFlags, SocketType,
};
use std::io::{self, IoSlice, IoSliceMut};
use std::mem::MaybeUninit;
use std::net::{SocketAddr, TcpListener};
use std::os::fd::{AsFd, OwnedFd};

/// The child's side, made in the parent.
#[derive(Debug)]
pub(super) struct ListenerSetup {
    child: OwnedFd,
    space: Vec<MaybeUninit<u8>>,
    addrs: Vec<SocketAddr>,
}

/// A socket pair: planwright's end, and the child's set-up to listen at
/// each of `addrs` and send the listeners, in that order, over the other
/// end.
pub(super) fn prepare(addrs: Vec<SocketAddr>) -> io::Result<(OwnedFd, ListenerSetup)> {
    let (parent, child) = rustix::net::socketpair(
        AddressFamily::UNIX,
        SocketType::STREAM,
        SocketFlags::CLOEXEC,
        None,
    )?;
    let space = vec![MaybeUninit::uninit(); rustix::cmsg_space!(ScmRights(1))];
    Ok((
        parent,
        ListenerSetup {
            child,
            space,
            addrs,
        },
    ))
}

impl ListenerSetup {
    /// In the child, in its new network namespace with loopback up: a
    /// listener at each address, each sent to the parent in a message of
    /// its own, and this process's copy closed (the program never holds
    /// them).
    pub(super) fn enter(&mut self) -> io::Result<()> {
        for addr in &self.addrs {
            let family = match addr {
                SocketAddr::V4(_) => AddressFamily::INET,
                SocketAddr::V6(_) => AddressFamily::INET6,
            };
            let listener =
                rustix::net::socket_with(family, SocketType::STREAM, SocketFlags::CLOEXEC, None)?;
            rustix::net::bind(&listener, addr)?;
            rustix::net::listen(&listener, 128)?;
            let fds = [listener.as_fd()];
            let mut control = SendAncillaryBuffer::new(&mut self.space);
            if !control.push(SendAncillaryMessage::ScmRights(&fds)) {
                return Err(io::Error::other("the control message does not fit"));
            }
            rustix::net::sendmsg(
                &self.child,
                &[IoSlice::new(b"L")],
                &mut control,
                SendFlags::empty(),
            )?;
        }
        Ok(())
    }
}

/// In the parent, once the child has started (so its hook has run): the
/// `count` listeners it sent, in order.
pub(in crate::sandbox) fn receive(parent: &OwnedFd, count: usize) -> io::Result<Vec<TcpListener>> {
    (0..count).map(|_| receive_one(parent)).collect()
}

fn receive_one(parent: &OwnedFd) -> io::Result<TcpListener> {
    let mut space = vec![MaybeUninit::uninit(); rustix::cmsg_space!(ScmRights(1))];
    let mut control = RecvAncillaryBuffer::new(&mut space);
    let mut byte = [0u8; 1];
    rustix::net::recvmsg(
        parent,
        &mut [IoSliceMut::new(&mut byte)],
        &mut control,
        RecvFlags::DONTWAIT | RecvFlags::CMSG_CLOEXEC,
    )?;
    let fd = control.drain().find_map(|msg| match msg {
        RecvAncillaryMessage::ScmRights(mut fds) => fds.next(),
        _ => None,
    });
    let fd = fd.ok_or_else(|| io::Error::other("the child sent no listener"))?;
    Ok(TcpListener::from(fd))
}
