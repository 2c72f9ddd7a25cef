//! A zbus connection serving stand-in objects on a thread of its own until dropped.

/// Builds the connection: the objects it serves.
pub(crate) type Build = Box<
    dyn FnOnce(zbus::connection::Builder<'static>) -> zbus::connection::Builder<'static> + Send,
>;

/// The serving thread; dropping it closes the connection.
#[derive(Debug)]
pub(crate) struct Served {
    stop: Option<tokio::sync::oneshot::Sender<()>>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl Served {
    /// Connects to the bus at `address` as `name` and serves what `build` adds; returns once
    /// the connection is up (its name owned). `what` names the stand-in in errors.
    pub(crate) fn start(
        address: &str,
        what: &'static str,
        name: &'static str,
        build: Build,
    ) -> Result<Served, crate::BusError> {
        let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
        let (ready, is_ready) = std::sync::mpsc::channel::<Result<(), crate::BusError>>();
        let address = address.to_owned();
        let thread = std::thread::spawn(move || {
            let rt = match tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
            {
                Ok(rt) => rt,
                Err(e) => {
                    let _ = ready.send(Err(e.to_string().into()));
                    return;
                }
            };
            rt.block_on(async move {
                let builder = zbus::connection::Builder::address(address.as_str());
                let builder = build(builder.name(name));
                let connection = builder.build().await;
                match connection {
                    Ok(connection) => {
                        let _ = ready.send(Ok(()));
                        let _ = stopped.await;
                        drop(connection);
                    }
                    Err(e) => {
                        let _ = ready.send(Err(crate::BusError::Failed(format!("{what}: {e}"))));
                    }
                }
            });
        });
        is_ready
            .recv()
            .map_err(|e| format!("{what}'s thread ended: {e}"))??;
        Ok(Served {
            stop: Some(stop),
            thread: Some(thread),
        })
    }
}

impl Drop for Served {
    fn drop(&mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}
