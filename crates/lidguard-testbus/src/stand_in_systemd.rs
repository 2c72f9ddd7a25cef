//! A stand-in for PID 1's service manager (`org.freedesktop.systemd1`) on the private bus, for
//! the one thing logind asks of it when the machine is to sleep: the `LoadState` of
//! `suspend.target`/`hibernate.target`, then `StartUnit` of it, whose job it reports done
//! (`JobRemoved`), as systemd does once the machine has woken up. systemd cannot run as PID 1
//! in a test, so this is the lowest seam left; nothing here touches the machine's power.

use std::sync::{Arc, Mutex};
use std::time::Instant;

use zbus::object_server::SignalEmitter;
use zbus::{ObjectPath, OwnedObjectPath};

use crate::served::Served;

/// Units started, with when.
pub(crate) type Started = Arc<Mutex<Vec<(String, Instant)>>>;

/// The stand-in, serving on its own thread until dropped.
#[derive(Debug)]
pub(crate) struct StandInSystemd {
    pub(crate) started: Started,
    _served: Served,
}

struct Manager {
    started: Started,
    next_job: u32,
}

#[zbus::interface(name = "org.freedesktop.systemd1.Manager")]
impl Manager {
    /// logind subscribes to job signals at start.
    fn subscribe(&self) {}

    async fn start_unit(
        &mut self,
        name: String,
        _mode: String,
        #[zbus(signal_emitter)] emitter: SignalEmitter<'_>,
    ) -> zbus::fdo::Result<OwnedObjectPath> {
        self.next_job += 1;
        let id = self.next_job;
        let job = OwnedObjectPath::try_from(format!("/org/freedesktop/systemd1/job/{id}"))
            .map_err(|e| zbus::fdo::Error::Failed(e.to_string()))?;
        self.started
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .push((name.clone(), Instant::now()));
        let emitter = emitter.into_owned();
        let done = job.clone();
        // The job finishes after the reply, as a real one does.
        tokio::spawn(async move {
            tokio::time::sleep(std::time::Duration::from_millis(50)).await;
            let _ = Manager::job_removed(&emitter, id, done.as_ref(), &name, "done").await;
        });
        Ok(job)
    }

    #[zbus(signal)]
    async fn job_removed(
        emitter: &SignalEmitter<'_>,
        id: u32,
        job: ObjectPath<'_>,
        unit: &str,
        result: &str,
    ) -> zbus::Result<()>;
}

struct Unit;

#[zbus::interface(name = "org.freedesktop.systemd1.Unit")]
impl Unit {
    #[zbus(property)]
    fn load_state(&self) -> String {
        "loaded".to_owned()
    }

    #[zbus(property)]
    fn active_state(&self) -> String {
        "inactive".to_owned()
    }
}

impl StandInSystemd {
    /// Starts serving on the bus at `address`; returns once the name is owned.
    pub(crate) fn start(address: &str) -> Result<StandInSystemd, crate::BusError> {
        let started = Started::default();
        let manager = Manager {
            started: Arc::clone(&started),
            next_job: 0,
        };
        let served = Served::start(
            address,
            "the systemd stand-in",
            "org.freedesktop.systemd1",
            Box::new(move |builder| {
                builder
                    .serve_at("/org/freedesktop/systemd1", manager)
                    .serve_at("/org/freedesktop/systemd1/unit/suspend_2etarget", Unit)
                    .serve_at("/org/freedesktop/systemd1/unit/hibernate_2etarget", Unit)
            }),
        )?;
        Ok(StandInSystemd {
            started,
            _served: served,
        })
    }
}
